/* Is the probed system a container? Docker, Podman, Kubernetes, LXC, nspawn. */
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"

static const char *cgroup_kind(const char *text)
{
	if (strstr(text, "kubepods"))
		return "kubernetes";
	if (strstr(text, "/docker/") || strstr(text, "/docker-") || strstr(text, "docker-"))
		return "docker";
	if (strstr(text, "/libpod-") || strstr(text, "/machine.slice/libpod"))
		return "podman";
	if (strstr(text, "/lxc/") || strstr(text, "lxc.payload"))
		return "lxc";
	if (strstr(text, "containerd"))
		return "containerd";
	return NULL;
}

void el_probe_container(el_probe *p)
{
	cJSON *c = el_jset_obj(el_probe_section(p, EL_SEC_SYSTEM), "container");
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	struct stat st;
	const char *kind = NULL, *evidence = NULL;

	if (el_root_lstat(&p->root, "/.dockerenv", &st) == 0) {
		kind = "docker";
		evidence = "/.dockerenv";
	} else if (el_root_lstat(&p->root, "/run/.containerenv", &st) == 0) {
		kind = "podman";
		evidence = "/run/.containerenv";
	} else if (el_probe_read_text(p, "/proc/1/cgroup", &b) == 0 &&
		   (kind = cgroup_kind(b.data)) != NULL) {
		evidence = "/proc/1/cgroup";
	} else {
		const char *v = el_probe_getenv(p, "container");

		if (v && *v) {
			kind = v;
			evidence = "container= in the environment";
		}
	}
	el_jset_bool(c, "detected", kind != NULL);
	el_jset_str(c, "kind", kind);
	el_jset_str(c, "evidence", evidence);
	el_buf_release(&b);
}
