/* The form of a lock a signature covers (envlock sign): the whole document, beside the id's form (json.c). */
#include <stdio.h>

#include "model.h"
#include "util/hash.h"
#include "util/error.h"

void el_lock_document(const envlock_lock *lock, el_buf *out)
{
	if (el_json_write(lock->doc, out, 0) != 0)
		el_oom();
}

bool el_lock_verify_digest(const envlock_lock *lock, char out[EL_LOCK_DIGEST_SIZE])
{
	const cJSON *verify = cJSON_GetObjectItemCaseSensitive(lock->doc, "verify");
	el_buf b = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX);
	char hex[EL_SHA256_HEX];

	out[0] = '\0';
	if (!cJSON_IsObject(verify))
		return false;
	if (el_json_write(verify, &b, 0) != 0)
		el_oom();
	el_sha256_buf(b.data, b.len, hex);
	el_buf_release(&b);
	snprintf(out, EL_LOCK_DIGEST_SIZE, "sha256:%s", hex);
	return true;
}
