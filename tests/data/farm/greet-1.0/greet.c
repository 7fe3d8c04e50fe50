#include <stdio.h>

int main(void)
{
	puts("hello from the farm");
	return 0;
}
