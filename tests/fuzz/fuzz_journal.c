/* restore's journal of an earlier run (what step was cut short, what was half made), read back on the next restore. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "restore/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	envlock_restore *r = calloc(1, sizeof(*r));

	r->journal_path = strdup(fz_write("restore-0123456789ab.journal", data, size));
	el_restore_read_journal(r);
	(void)el_restore_created(r, "/opt/conda/envs/mmdet");
	(void)envlock_restore_interrupted(r);
	free(r->interrupted);
	el_strvec_release(&r->created);
	free(r->journal_path);
	free(r);
	return 0;
}
