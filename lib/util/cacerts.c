/* Where this machine keeps its CA certificates (see cacerts.h). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "cacerts.h"

/* The bundles of the distributions envlock runs on (Go's crypto/x509 root_linux.go lists the same) */
static const char *const bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt",                /* Debian, Ubuntu, Arch, Gentoo */
	"/etc/pki/tls/certs/ca-bundle.crt",                  /* Fedora, RHEL 6 */
	"/etc/ssl/ca-bundle.pem",                            /* openSUSE */
	"/etc/pki/tls/cacert.pem",                           /* OpenELEC */
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* CentOS, RHEL 7 and later */
	"/etc/ssl/cert.pem",                                 /* Alpine */
	NULL
};
static const char *const folders[] = { "/etc/ssl/certs", "/etc/pki/tls/certs", NULL };

static int is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, R_OK) == 0;
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

void el_cacerts_find(el_cacerts *out)
{
	static char problem[512];
	const char *file = getenv("SSL_CERT_FILE"), *dir = getenv("SSL_CERT_DIR");

	*out = (el_cacerts){ 0 };
	/* OpenSSL's own variables win, as they do for openssl and curl */
	if ((file && *file) || (dir && *dir)) {
		out->from = file && *file ? "SSL_CERT_FILE" : "SSL_CERT_DIR";
		if (file && *file && !is_file(file)) {
			snprintf(problem, sizeof(problem), "SSL_CERT_FILE '%s' is not a readable file", file);
			out->problem = problem;
		} else if (dir && *dir && !(file && *file) && !is_dir(dir)) {
			snprintf(problem, sizeof(problem), "SSL_CERT_DIR '%s' is not a folder", dir);
			out->problem = problem;
		}
		out->file = file && *file ? file : NULL;
		out->dir = dir && *dir ? dir : NULL;
		return;
	}
	out->from = "default";
	for (const char *const *b = bundles; *b; b++)
		if (is_file(*b)) {
			out->file = *b;
			return;
		}
	for (const char *const *d = folders; *d; d++)
		if (is_dir(*d)) {
			out->dir = *d;
			return;
		}
	out->problem = "no CA certificates were found (SSL_CERT_FILE, SSL_CERT_DIR, /etc/ssl/certs/ca-certificates.crt, "
		       "/etc/pki/tls/certs/ca-bundle.crt and the other usual places): set SSL_CERT_FILE to a PEM bundle";
}

const char *el_cacerts_use_for_git(void)
{
	el_cacerts ca;

	el_cacerts_find(&ca);
	if (ca.file || ca.dir)
		git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, ca.file, ca.dir);
	return ca.problem;
}
