/* envlock sign, verify-sig, keygen: Ed25519 signatures of whole lockfiles. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "util/interrupt.h"

static void usage_sign(FILE *out)
{
	fputs("usage: envlock sign LOCK --key KEY.pem [-o LOCK.sig]\n"
	      "       envlock sign LOCK --print-signed-bytes\n"
	      "       envlock sign --file FILE --key KEY.pem [-o FILE.sig]\n"
	      "\n"
	      "  -k, --key KEY.pem         Ed25519 private key (PEM, unencrypted; envlock keygen makes one)\n"
	      "  -o, --output FILE         signature file to write (default LOCK.sig; - for stdout)\n"
	      "      --print-signed-bytes  write the bytes a signature of LOCK covers to stdout; sign nothing\n"
	      "      --file                FILE is any file (a release's SHA256SUMS): sign its bytes as they are\n"
	      "\n"
	      "Signs the whole lock, created and verify included, as canonical JSON (keys sorted,\n"
	      "no whitespace): re-indenting the file keeps the signature valid, changing any value,\n"
	      "the date or the verify section breaks it.\n", out);
}

static void usage_verify(FILE *out)
{
	fputs("usage: envlock verify-sig LOCK [--sig LOCK.sig] --pub PUB.pem\n"
	      "       envlock verify-sig --file FILE [--sig FILE.sig] --pub PUB.pem\n"
	      "\n"
	      "  -s, --sig FILE      signature file (default LOCK.sig)\n"
	      "  -p, --pub PUB.pem   the signer's Ed25519 public key (PEM)\n"
	      "      --file          FILE is any file, signed with sign --file\n"
	      "\n"
	      "Says what the signature covers: the lock id, created and the verify result.\n"
	      "Exit status: 0 the signature is valid, 1 it is not, 2 an input cannot be read.\n", out);
}

static void usage_keygen(FILE *out)
{
	fputs("usage: envlock keygen [-o PREFIX] [--force]\n"
	      "\n"
	      "  -o, --output PREFIX  write PREFIX.key.pem (private, mode 0600) and PREFIX.pub.pem\n"
	      "                       (default prefix: envlock)\n"
	      "      --force          replace an existing key pair\n", out);
}

/*
 * What sign and verify-sig share after their options: exactly one LOCK
 * (or, with file, any FILE) and the required key (key_flag names it in the
 * error; none with no_key), the signature file (sig, else LOCK.sig,
 * malloc'd into *sig_path) and the loaded lock (none for a file). CMD_OK;
 * the status to exit with after saying why; or the library's code of a
 * failed load.
 */
static int signed_lock(const char *cmd, int argc, char **argv, const char *key, const char *key_flag, int no_key,
		       const char *sig, int file, void (*usage)(FILE *), envlock_ctx *ctx, envlock_lock **lock,
		       char **sig_path)
{
	*lock = NULL;
	*sig_path = NULL;
	if (argc - optind != 1 || (!key && !no_key)) {
		cmd_error("%s: expected one LOCK%s%s", cmd, no_key ? "" : " and ", no_key ? "" : key_flag);
		usage(stderr);
		return CMD_USAGE;
	}
	if (sig ? (*sig_path = strdup(sig)) == NULL : asprintf(sig_path, "%s.sig", argv[optind]) < 0) {
		*sig_path = NULL;
		cmd_error("out of memory");
		return CMD_USAGE;
	}
	return file ? CMD_OK : cmd_lock_load(lock, ctx, argv[optind]);
}

/* "verify: pass", or that the lock had no verify section. */
static const char *verify_words(const char *result, char *buf, size_t size)
{
	if (!*result)
		return "no verify section";
	snprintf(buf, size, "verify: %s", result);
	return buf;
}

/* sign LOCK --print-signed-bytes: the bytes a signature of the lock covers, as they are. */
static int print_signed_bytes(envlock_ctx *ctx, const envlock_lock *lock, const char *path)
{
	size_t len = 0;
	char *bytes = NULL;
	int rc = envlock_signed_bytes(&bytes, &len, ctx, lock);

	if (rc == 0) {
		fwrite(bytes, 1, len, stdout);
		envlock_signed_bytes_free(bytes);
		return CMD_OK;
	}
	cmd_error("sign: '%s': %s", path, envlock_error_last(ctx));
	return CMD_USAGE;
}

int cmd_sign(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "output", required_argument, NULL, 'o' },
		{ "file", no_argument, NULL, 'F' },
		{ "print-signed-bytes", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *key = NULL, *output = NULL;
	envlock_sign_result res;
	envlock_lock *lock = NULL;
	char *path = NULL, words[64];
	int c, file = 0, print = 0, rc;

	while ((c = getopt_long(argc, argv, "k:o:h", options, NULL)) != -1) {
		switch (c) {
		case 'k': key = optarg; break;
		case 'o': output = optarg; break;
		case 'F': file = 1; break;
		case 'P': print = 1; break;
		case 'h': usage_sign(stdout); return CMD_OK;
		default: return cmd_bad_option("sign", argv, usage_sign);
		}
	}
	if (print && (file || key || output)) {
		cmd_error("sign: --print-signed-bytes signs nothing and writes to stdout: it takes a LOCK and no %s",
			  file ? "--file" : key ? "--key" : "-o");
		usage_sign(stderr);
		return CMD_USAGE;
	}
	if ((rc = signed_lock("sign", argc, argv, key, "--key KEY.pem", print, output, file, usage_sign, ctx, &lock,
			      &path)) != CMD_OK)
		goto done;
	if (print) {
		rc = print_signed_bytes(ctx, lock, argv[optind]);
		goto done;
	}
	rc = file ? envlock_sign_file(&res, ctx, argv[optind], key, path) : envlock_sign(&res, ctx, lock, key, path);
	if (rc == ENVLOCK_EINVAL) {
		/* a lock that is not as it was saved: the lock is at fault, not the key */
		cmd_error("sign: '%s': %s", argv[optind], envlock_error_last(ctx));
		rc = CMD_USAGE;
		goto done;
	} else if (rc != 0) {
		cmd_error("sign: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
		goto done;
	}
	if (!output || strcmp(output, "-") != 0) {
		printf("signed %s\n", res.lock_id);
		if (!file)
			printf("covers the whole lock: created %s, %s\n", res.created,
			       verify_words(res.verify, words, sizeof(words)));
		printf("key %s\nwrote %s\n", res.fingerprint, path);
	}
	rc = CMD_OK;
done:
	envlock_lock_free(lock);
	free(path);
	return rc;
}

int cmd_verify_sig(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "sig", required_argument, NULL, 's' },
		{ "pub", required_argument, NULL, 'p' },
		{ "file", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *sig = NULL, *pub = NULL;
	envlock_sig_report rep;
	envlock_lock *lock = NULL;
	char *path = NULL, words[64];
	int c, file = 0, rc;

	while ((c = getopt_long(argc, argv, "s:p:h", options, NULL)) != -1) {
		switch (c) {
		case 's': sig = optarg; break;
		case 'p': pub = optarg; break;
		case 'F': file = 1; break;
		case 'h': usage_verify(stdout); return CMD_OK;
		default: return cmd_bad_option("verify-sig", argv, usage_verify);
		}
	}
	if ((rc = signed_lock("verify-sig", argc, argv, pub, "--pub PUB.pem", 0, sig, file, usage_verify, ctx, &lock,
			      &path)) != CMD_OK)
		goto done;
	/* an input that cannot be read is an error (2), not a signature that fails (1) */
	if ((rc = file ? envlock_verify_sig_file(&rep, ctx, argv[optind], path, pub)
		       : envlock_verify_sig(&rep, ctx, lock, path, pub)) != 0)
		goto done;
	if (rep.valid) {
		if (file)
			printf("ok: '%s' (%s) is signed by key %s\n", argv[optind], rep.lock_id, rep.fingerprint);
		else
			printf("ok: %s (created %s, %s) is signed by key %s\n", rep.lock_id, rep.created,
			       verify_words(rep.verify, words, sizeof(words)), rep.fingerprint);
		rc = CMD_OK;
	} else {
		cmd_error("verify-sig: '%s': %s", argv[optind], rep.reason);
		rc = CMD_FAIL;
	}
done:
	envlock_lock_free(lock);
	free(path);
	return rc;
}

int cmd_keygen(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *prefix = "envlock";
	envlock_keygen_result res;
	int c, force = 0, rc;

	while ((c = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
		switch (c) {
		case 'o': prefix = optarg; break;
		case 'f': force = 1; break;
		case 'h': usage_keygen(stdout); return CMD_OK;
		default: return cmd_bad_option("keygen", argv, usage_keygen);
		}
	}
	if (optind != argc) {
		cmd_error("keygen: unexpected argument '%s'", argv[optind]);
		usage_keygen(stderr);
		return CMD_USAGE;
	}
	/*
	 * A few small files, written one after the other: a signal is held
	 * until the pair is whole or nothing is written (each file's commit
	 * refuses once it came), never leaving NAME.new or half a pair
	 */
	el_interrupt_poll_begin();
	rc = envlock_keygen(&res, ctx, prefix, force);
	el_interrupt_poll_end();
	if (rc != 0) {
		cmd_error("keygen: %s%s", envlock_error_last(ctx),
			  rc == ENVLOCK_EEXISTS ? "; --force replaces the key pair" : "");
		rc = CMD_FAIL;
	} else {
		if (res.completed)
			fprintf(stderr, "envlock: keygen: '%s' had no public key beside it (a keygen cut short): "
				"wrote its public key, '%s'\n", res.private_path, res.public_path);
		printf("private key %s (keep it to yourself)\npublic key  %s\nfingerprint %s\n",
		       res.private_path, res.public_path, res.fingerprint);
		envlock_keygen_result_release(&res);
		rc = CMD_OK;
	}
	return rc;
}
