/*
 * fuzz_rootcfg.c - root configurations (roots/config.c).
 */
#include "util/util.h"

#include "roots/roots.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roots_config c;
	struct kiln_err err = KILN_ERR_INIT;
	size_t i;

	roots_config_init(&c);
	if (roots_config_from_mem(&c, "fuzz.cfg", (const char *)data, size, &err)) {
		if (!err.msg[0])
			KILN_BUG("an error without a message");
	} else {
		if (!c.arch || c.ninstall > ROOTS_CONFIG_MAX_INSTALL ||
		    c.nrepos > ROOTS_CONFIG_MAX_REPOS)
			KILN_BUG("an accepted config with a bad value");
		for (i = 0; i < c.nrepos; i++)
			if (!c.repos[i].baseurl ||
			    ((c.repos[i].gpgcheck || c.repos[i].repo_gpgcheck) &&
			     !c.repos[i].gpgkey))
				KILN_BUG("an accepted repository without baseurl or key");
	}
	roots_config_release(&c);
	return 0;
}
