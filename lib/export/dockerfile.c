/*
 * The Dockerfile export: the lock's environment for a host whose own
 * setup cannot be changed. Everything it needs is inside the file (the
 * conda list, the pip requirements and the configs as here-documents,
 * BuildKit's Dockerfile syntax 1.4), so it builds from an empty context.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lock/model.h"
#include "util/text.h"
#include "util/xalloc.h"

/* The Miniconda installers by architecture, from Anaconda's own list (data/miniconda-installers.json). */
extern const char el_miniconda_installers[];

__asm__(".section .rodata\n"
	".global el_miniconda_installers\n"
	".type el_miniconda_installers, @object\n"
	"el_miniconda_installers:\n"
	".incbin \"data/miniconda-installers.json\"\n"
	".byte 0\n"
	".previous\n");

/* A path a COPY destination can take as it is: no spaces, quotes, '$', '\\' or ".." components. */
static bool safe_path(const char *p)
{
	if (!el_export_word(p) || p[0] == '-')
		return false;
	for (const char *s = p; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("._+,@=/-", *s)))
			return false;
	return strcmp(p, "..") != 0 && !el_starts_with(p, "../") && !strstr(p, "/../") && !el_ends_with(p, "/..");
}

/* A here-document delimiter that is no line of text. */
static char *delimiter(const char *text)
{
	for (int n = 0;; n++) {
		char *d = n ? el_xasprintf("ENVLOCK_EOF_%d", n) : el_xstrdup("ENVLOCK_EOF");
		size_t len = strlen(d);
		bool clash = false;

		for (const char *line = text; line && *line && !clash;) {
			const char *nl = strchr(line, '\n');
			size_t ll = nl ? (size_t)(nl - line) : strlen(line);

			clash = ll == len && strncmp(line, d, len) == 0;
			line = nl ? nl + 1 : NULL;
		}
		if (!clash)
			return d;
		free(d);
	}
}

/* COPY <<'EOF' dest, the text, EOF: the quoted delimiter leaves $ and \ in the text alone. */
static void heredoc(el_export *e, const char *dest, const char *text)
{
	char *d = delimiter(text);
	size_t len = strlen(text);

	el_buf_addf(e->out, "COPY <<'%s' %s\n%s%s%s\n", d, dest, text, len && text[len - 1] != '\n' ? "\n" : "", d);
	free(d);
}

static bool pip_owned(const el_pip_req *r)
{
	return r->owner == EL_OWNER_PIP;
}

/* The pip requirements for the image: what pip put there (conda's and the system's are installed otherwise). */
static void pip_part(el_export *e, const char *pip)
{
	el_pip_req *reqs;
	size_t n, npip = 0, nsys = 0;
	el_buf b = EL_BUF_INIT(e->out->limit); /* a part of e->out: its cap */
	el_buf *saved = e->out;

	el_pip_reqs(e->v, &reqs, &n);
	for (size_t i = 0; i < n; i++) {
		npip += pip_owned(&reqs[i]) && !reqs[i].unsafe;
		nsys += reqs[i].owner == EL_OWNER_SYSTEM && !reqs[i].unsafe;
	}
	if (nsys) {
		el_buf_adds(saved, "# Installed by the system's package manager on the saved machine, not by pip:\n#");
		for (size_t i = 0; i < n; i++)
			if (reqs[i].owner == EL_OWNER_SYSTEM && !reqs[i].unsafe)
				el_buf_addf(saved, " %s %s", reqs[i].name, reqs[i].version ? reqs[i].version : "?");
		el_buf_adds(saved, "\n");
	}
	if (npip) {
		e->out = &b;
		el_write_requirements(e, reqs, n, pip_owned, true);
		e->out = saved;
		heredoc(e, "/envlock/requirements.txt", el_buf_cstr(&b));
		el_buf_join_failure(e->out, &b);
		/* the list is the whole environment, pinned: nothing else is to be resolved */
		el_buf_addf(e->out, "RUN %s install --no-cache-dir --no-deps -r /envlock/requirements.txt\n", pip);
	}
	el_buf_release(&b);
	el_pip_reqs_free(reqs, n);
}

static void configs_part(el_export *e)
{
	bool first = true;

	for (size_t i = 0; i < e->v->configs.nfiles; i++) {
		const char *path = e->v->configs.files[i].path, *text = e->v->configs.files[i].text;

		if (first) {
			el_buf_adds(e->out, "\n# The configs, as the lock recorded them (relative paths under /workspace)\n");
			first = false;
		}
		if (!text) {
			el_buf_addf(e->out, "# %s: the lock has no text of it\n", safe_path(path) ? path : "a config");
			continue;
		}
		if (!safe_path(path)) {
			el_buf_adds(e->out, "# a config whose path has characters a Dockerfile cannot carry was left out\n");
			el_export_warn(e, "dockerfile: a config with an unusual path was left out");
			continue;
		}
		heredoc(e, path, text);
	}
}

/*
 * The RUN lines that put conda in /opt/conda: the installer of arch (the
 * data file's first row for an arch no row names), downloaded from its
 * folder, which lists the older installers an old base image may need.
 */
static void miniconda_part(el_export *e, const char *arch)
{
	cJSON *doc = cJSON_Parse(el_miniconda_installers), *rows = el_jget(doc, "rows"), *row, *pick = NULL;
	const char *url, *slash, *folder;

	cJSON_ArrayForEach(row, rows)
		if (!pick && arch && strcmp(el_jget_str(row, "arch") ?: "", arch) == 0)
			pick = row;
	url = el_jget_str(pick ? pick : cJSON_GetArrayItem(rows, 0), "url");
	slash = url ? strrchr(url, '/') : NULL;
	if (!slash) { /* envlock's own data; t0033 keeps this from shipping */
		el_buf_adds(e->out, "\n# conda itself: envlock's list of Miniconda installers has none\n");
		cJSON_Delete(doc);
		return;
	}
	/* the folder as a reader types it: host and path, no scheme, no final '/' */
	folder = strstr(url, "://") ? strstr(url, "://") + 3 : url;
	el_buf_addf(e->out,
		    "\n# conda itself; every package of the environment comes from the explicit list below.\n"
		    "# An old base image may need an older installer: %.*s lists them.\n"
		    "ARG MINICONDA=%s\n"
		    "RUN curl -fsSL -o /tmp/miniconda.sh %.*s${MINICONDA} \\\n"
		    " && bash /tmp/miniconda.sh -b -p /opt/conda && rm /tmp/miniconda.sh\n",
		    (int)(slash - folder), folder, slash + 1, (int)(slash + 1 - url), url);
	cJSON_Delete(doc);
}

int el_export_dockerfile(el_export *e)
{
	const char *kind = e->v->python.kind, *prefix = e->v->python.prefix;
	const char *pyver = e->v->python.version, *arch = e->v->system.arch;
	const char *envname = e->v->conda.name;
	bool conda = el_conda_exportable(e->v);
	el_base_image base;

	el_choose_base_image(&base, e->v);
	el_buf_addf(e->out, "# syntax=docker/dockerfile:1.4\n"
			      "# The environment of envlock lock\n# %s,\n"
			      "# for a host whose own setup cannot be changed. Written by envlock export\n"
			      "# --format dockerfile; build it anywhere: docker build -t NAME - < Dockerfile\n#\n",
		      e->lock_id);
	el_buf_adds(e->out, base.comment);
	if (base.tag)
		el_buf_addf(e->out, "FROM nvidia/cuda:%s\n", base.tag);
	else
		el_buf_addf(e->out, "FROM %s\n", base.os_base);
	el_buf_addf(e->out, "LABEL envlock.lock-id=\"%s\"\n"
			      "ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8\n", e->lock_id);
	el_buf_addf(e->out, "RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl bzip2 git%s \\\n"
			      " && rm -rf /var/lib/apt/lists/*\n",
		      conda ? "" : " python3 python3-pip python3-venv");

	if (conda) {
		char *name = el_xstrdup(envname && safe_path(envname) && !strchr(envname, '/') && strcmp(envname, "base") != 0
					? envname : "envlock");

		miniconda_part(e, arch);
		{
			el_buf b = EL_BUF_INIT(e->out->limit); /* a part of e->out: its cap */
			el_buf *saved = e->out;

			e->out = &b;
			el_write_conda_explicit(e);
			e->out = saved;
			heredoc(e, "/envlock/conda-explicit.txt", el_buf_cstr(&b));
			el_buf_join_failure(e->out, &b);
			el_buf_release(&b);
		}
		el_buf_addf(e->out, "RUN /opt/conda/bin/conda create -y -p /opt/conda/envs/%s --file /envlock/conda-explicit.txt\n"
				      "ENV PATH=/opt/conda/envs/%s/bin:$PATH\n\n", name, name);
		pip_part(e, "pip");
		free(name);
	} else if (kind && strcmp(kind, "venv") == 0) {
		const char *venv = prefix && prefix[0] == '/' && safe_path(prefix) ? prefix : "/opt/venv";

		el_buf_addf(e->out, "\n# A virtual environment where the lock had one; the lock's Python is %s,\n"
				      "# the image's python3 is the base image's.\n"
				      "RUN python3 -m venv %s\nENV PATH=%s/bin:$PATH\n\n",
			      el_export_word(pyver) ? pyver : "unknown", venv, venv);
		pip_part(e, "pip");
	} else {
		el_buf_addf(e->out, "\n# The system's Python, as in the lock (Python %s there; the image's python3\n"
				      "# is the base image's). pip may install into it (PEP 668's marker notwithstanding).\n"
				      "ENV PIP_BREAK_SYSTEM_PACKAGES=1\n\n",
			      el_export_word(pyver) ? pyver : "unknown");
		pip_part(e, "python3 -m pip");
	}
	el_buf_adds(e->out, "\nWORKDIR /workspace\n");
	configs_part(e);
	el_buf_addf(e->out, "\n# Compare the image with the lock: envlock save -o image.lock.json,\n"
			      "# then envlock diff <the lock> image.lock.json\n");
	el_base_image_release(&base);
	return 0;
}
