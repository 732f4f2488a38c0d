/* CPU model and cores (/proc/cpuinfo), memory (/proc/meminfo): for throughput questions. */
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_LIMIT_CPUINFO (8u << 20)
#define EL_MAX_CORES 4096

/* The value of "key : value" when line starts with key, else NULL. */
static char *field(const char *line, size_t len, const char *key)
{
	size_t kl = strlen(key);
	const char *colon, *v;
	size_t vl;

	if (len < kl || memcmp(line, key, kl) != 0)
		return NULL;
	for (size_t i = kl; i < len && line[i] != ':'; i++)
		if (line[i] != ' ' && line[i] != '\t')
			return NULL;
	colon = memchr(line, ':', len);
	if (!colon)
		return NULL;
	v = colon + 1;
	vl = len - (size_t)(v - line);
	el_trim(&v, &vl);
	return el_xstrndup(v, vl);
}

static void probe_cpu(el_probe *p, cJSON *system)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_CPUINFO);
	const char *pos, *end, *line;
	size_t len, logical = 0, ncores = 0, nsockets = 0;
	long phys = -1, core = -1;
	long *cores = NULL, *sockets = NULL;
	char *model = NULL, *v;
	cJSON *cpu;

	if (el_probe_read_text(p, "/proc/cpuinfo", &b) != 0) {
		el_buf_release(&b);
		return;
	}
	cores = el_xcalloc(EL_MAX_CORES, sizeof(long));
	sockets = el_xcalloc(EL_MAX_CORES, sizeof(long));
	pos = b.data;
	end = b.data + b.len;
	for (;;) {
		bool more = el_next_line(&pos, end, &line, &len);

		/* a blank line ends one processor's block */
		if ((!more || len == 0) && phys >= 0 && core >= 0) {
			long key = phys * 65536 + core;
			size_t i;

			for (i = 0; i < ncores && cores[i] != key; i++)
				;
			if (i == ncores && ncores < EL_MAX_CORES)
				cores[ncores++] = key;
			for (i = 0; i < nsockets && sockets[i] != phys; i++)
				;
			if (i == nsockets && nsockets < EL_MAX_CORES)
				sockets[nsockets++] = phys;
			phys = core = -1;
		}
		if (!more)
			break;
		if ((v = field(line, len, "processor")) != NULL) {
			logical++;
			free(v);
		} else if (!model && ((v = field(line, len, "model name")) != NULL ||
				      (v = field(line, len, "Model")) != NULL)) {
			model = v;
		} else if ((v = field(line, len, "physical id")) != NULL) {
			phys = atol(v);
			free(v);
		} else if ((v = field(line, len, "core id")) != NULL) {
			core = atol(v);
			free(v);
		}
	}
	cpu = el_jset_obj(system, "cpu");
	el_jset_str(cpu, "model", model);
	el_jset_int(cpu, "logical_cores", (long long)logical);
	/* without topology lines (arm64, some VMs) every logical CPU is a core */
	el_jset_int(cpu, "physical_cores", (long long)(ncores ? ncores : logical));
	if (nsockets)
		el_jset_int(cpu, "sockets", (long long)nsockets);
	free(model);
	free(cores);
	free(sockets);
	el_buf_release(&b);
}

static void probe_memory(el_probe *p, cJSON *system)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	const char *pos, *line;
	size_t len;

	if (el_probe_read_text(p, "/proc/meminfo", &b) != 0) {
		el_buf_release(&b);
		return;
	}
	pos = b.data;
	while (el_next_line(&pos, b.data + b.len, &line, &len)) {
		char *v = field(line, len, "MemTotal");

		if (v) {
			cJSON *mem = el_jset_obj(system, "memory");

			el_jset_int(mem, "total_bytes", atoll(v) * 1024LL);
			free(v);
			break;
		}
	}
	el_buf_release(&b);
}

/* statfs(2)'s f_type of a procfs (linux/magic.h PROC_SUPER_MAGIC) */
#define EL_PROC_SUPER_MAGIC 0x9fa0

bool el_probe_host_procfs(el_probe *p)
{
	struct statfs fs;
	char *host;
	bool mounted;

	if (p->root.live)
		return false;
	host = el_root_host(&p->root, "/proc");
	mounted = host && statfs(host, &fs) == 0 && fs.f_type == EL_PROC_SUPER_MAGIC;
	free(host);
	return mounted;
}

void el_probe_hardware(el_probe *p)
{
	cJSON *system = el_probe_section(p, EL_SEC_SYSTEM);

	/* a procfs mounted in the tree is the running kernel's: the host's CPU and memory */
	if (el_probe_host_procfs(p)) {
		el_probe_warn(p, "'/proc': a mounted procfs describes the running kernel, not this tree; "
			      "kernel, CPU, memory and their limits not recorded");
		return;
	}
	probe_cpu(p, system);
	probe_memory(p, system);
}
