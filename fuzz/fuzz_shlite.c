/*
 * fuzz_shlite.c - the in-process %(...) evaluator (macro/shlite.c) on arbitrary script text.
 *
 * Programs are never started here (no MACRO_SHLITE_PROGRAMS). It reads spec and macro text, so it must end every input, accept or refuse it the same way
 * each time, and print only what the accepted subset can print: the bytes of its words and
 * values (printable ASCII, tabs, newlines), bounded in size.
 */
#include "util/util.h"

#include "macro/macro_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const env[] = {"RPM_BUILD_NCPUS=4",  "EMPTY=", "SP=a b", "STAR=*", "BS=a\\b",
                                  "PATH=/usr/bin:/bin", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiln_buf a = KILN_BUF_INIT(KILN_MIB);
	struct kiln_buf b = KILN_BUF_INIT(KILN_MIB);
	char *cmd = kiln_strndup((const char *)data, size);
	bool took;
	size_t i;

	if (!cmd)
		return 0;
	took = macro_shlite_run(cmd, env, 0, &a);
	if (took != macro_shlite_run(cmd, env, 0, &b) || a.len != b.len ||
	    memcmp(a.ptr, b.ptr, a.len))
		KILN_BUG("evaluator not deterministic");
	if (!took && a.len)
		KILN_BUG("refused script left output");
	for (i = 0; i < a.len; i++) {
		unsigned char c = (unsigned char)a.ptr[i];

		if ((c < 0x20 && c != '\t' && c != '\n') || c >= 0x7f)
			KILN_BUG("byte 0x%02x in output", c);
	}
	if (took && size && !memchr(data, 'e', size) && a.len)
		KILN_BUG("output without an echo");
	kiln_buf_release(&a);
	kiln_buf_release(&b);
	free(cmd);
	return 0;
}
