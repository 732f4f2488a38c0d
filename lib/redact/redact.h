/*
 * Redaction of a lock's whole document (cJSON), after probing and before
 * the id is computed, so no probe has to know about it.
 *
 * Two passes:
 * - el_redact_secrets, always (save, bundle): credentials in config text
 *   and effective values (a value with a credential's shape,
 *   el_redact_credential; a key's name alone never masks a config
 *   value), and credentials and token query parameters in URLs, never
 *   reach a lock; the config values masked are listed by key path;
 * - el_redact_all, for --redact: also home folders and user names, the
 *   host name, GPU UUIDs, remote URLs beyond host and path, and
 *   environment values, each replaced by a placeholder that is the same
 *   for the same input within one lock (<user1>, <host1>, GPU-<gpu1>,
 *   <env1>), so redacted locks diff.
 *
 * Either pass records what it replaced in the document's top-level
 * "redacted" member (only when it replaced something).
 */
#ifndef EL_REDACT_H
#define EL_REDACT_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* The placeholder a masked secret becomes, in config text and values. */
#define EL_REDACT_SECRET "<secret>"

/* Does a key name say it holds a secret (api_key, accessToken, WANDB_API_KEY, password)? */
bool el_redact_secret_key(const char *name, size_t len);

/*
 * Has the n bytes at s the shape of a credential? A token by its own
 * form (hf_..., ghp_..., github_pat_..., glpat-..., sk-..., xoxb-...,
 * AKIA..., AIza..., a JWT) anywhere; under a key that says it holds a
 * secret (secret_key), also an opaque string of 16 or more digits and
 * letters, digits among them (a W&B API key's 40 hex digits, a numeric
 * key). A config's values are masked
 * only so: dict(key='proposals') names a field, not a secret.
 */
bool el_redact_credential(const char *s, size_t n, bool secret_key);

/*
 * text with every value under a secret-looking key masked (Python,
 * YAML, JSON and INI assignments: `api_key='...'`, `token: ...`,
 * `"password": "..."`) and credentials left out of the URLs in it;
 * malloc'd, or NULL when nothing changed. *n counts what was masked.
 */
char *el_redact_text_secrets(const char *text, size_t *n);

/*
 * s with each URL in it rewritten: user:password@ (but not ssh's git@
 * or a ${VAR}) and anaconda.org's /t/<token> left out, and query
 * parameters with a secret-looking name dropped; with all, the query
 * and fragment dropped too (what is left is host and path). malloc'd,
 * or NULL when nothing changed.
 */
char *el_redact_urls(const char *s, bool all, size_t *n);

/*
 * A message (a warning) with the credentials left out of the URLs it
 * quotes and each secret query parameter's value shown as <secret>, so
 * it still says what was refused; malloc'd, or NULL when unchanged.
 */
char *el_redact_message(const char *s);

/* The always-on pass over a lock's document; returns how much it masked. */
size_t el_redact_secrets(cJSON *doc);

/* The --redact pass (el_redact_secrets included). */
void el_redact_all(cJSON *doc);

#endif
