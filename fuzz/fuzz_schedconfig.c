/*
 * fuzz_schedconfig.c - the scheduler's INI configuration parser.
 */
#include "util/util.h"

#include "scheduler/scheduler.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scheduler_config c;
	struct kiln_err err = KILN_ERR_INIT;

	scheduler_config_init(&c);
	if (scheduler_config_from_mem(&c, (const char *)data, size, "fuzz.ini", &err)) {
		if (!err.msg[0])
			KILN_BUG("an error without a message");
	} else if (!c.listen || !c.data_dir || c.lease_ttl_ms <= 0 || c.max_attempts < 1) {
		KILN_BUG("an accepted config with a bad value");
	}
	scheduler_config_release(&c);
	return 0;
}
