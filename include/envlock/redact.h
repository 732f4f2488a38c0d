/*
 * envlock — redaction (`save --redact`, `report --redact`, `bundle --redact`).
 *
 * A redacted lock can be published with a double-blind paper: home
 * folders and user names in every path and string become <user1>,
 * <user2>, ..., the host name <host1>, environment values <env1>, ...
 * (names kept), GPU UUIDs GPU-<gpu1>, ..., remote URLs keep only
 * scheme, host and path, and config values under keys that say token,
 * secret, password or key become "<secret>". The same value gets the same placeholder within one lock,
 * so two redacted locks still diff. The lock's top-level "redacted"
 * member says which classes were replaced and how often; its id is of
 * the redacted content.
 *
 * Secrets (config values under secret-looking keys, credentials and
 * tokens in URLs) are masked by every save, redacted or not.
 */
#ifndef ENVLOCK_REDACT_H
#define ENVLOCK_REDACT_H

#include "common.h"
#include "lock.h"

/**
 * Redact lock in place, as `save --redact` does; a lock redacted before
 * is redacted again without harm. Its id is recomputed when next asked
 * for. Returns 0.
 */
ENVLOCK_EXTERN(int) envlock_lock_redact(envlock_lock *lock);

#endif
