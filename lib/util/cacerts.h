/*
 * Where this machine keeps its CA certificates, for libgit2's HTTPS. The
 * static binary's OpenSSL has no distribution's default built in that
 * fits every machine it runs on (Debian keeps the bundle in one place,
 * RHEL in another), so envlock looks, as Go's crypto/x509 does.
 */
#ifndef EL_CACERTS_H
#define EL_CACERTS_H

typedef struct {
	const char *file;   /* a PEM bundle, or NULL */
	const char *dir;    /* a folder of hashed certificates, or NULL */
	const char *from;   /* "SSL_CERT_FILE", "SSL_CERT_DIR" or "default" (the first that exists) */
	const char *problem; /* why none can be used, or NULL: "SSL_CERT_FILE '…' cannot be read" */
} el_cacerts;

/* Find the CA certificates (the environment first, then the known places); never fails. */
void el_cacerts_find(el_cacerts *out);

/*
 * Give libgit2 the locations el_cacerts_find() chose (after
 * git_libgit2_init). Returns the hint to add to an HTTPS error when none
 * was found, or NULL; static storage.
 */
const char *el_cacerts_use_for_git(void);

#endif
