#include <stdio.h>

int main(void)
{
	printf("%s: 6 * 7 = %d\n", CALC_GREETING, 6 * 7);
	return 0;
}
