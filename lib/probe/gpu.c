/*
 * The GPUs: one /proc/driver/nvidia/gpus/<bus>/information file each
 * ("Model: \t\t Tesla V100-PCIE-16GB", "Bus Location: \t 0000:3b:00.0",
 * ...). On the live machine nvidia-smi adds memory, compute capability,
 * PCIe link and power limit, which the driver's files do not say.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define EL_NVSMI_TIMEOUT_MS 10000

/* "Video BIOS" -> "video_bios" */
static char *key_name(const char *k, size_t n)
{
	char *s = el_xstrndup(k, n);

	for (char *c = s; *c; c++)
		*c = *c == ' ' || *c == '-' ? '_' : (char)tolower((unsigned char)*c);
	return s;
}

static void read_information(el_probe *p, const char *path, cJSON *dev)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	const char *pos, *line;
	size_t len;

	if (el_probe_read_text(p, path, &b) != 0) {
		el_buf_release(&b);
		return;
	}
	pos = b.data;
	while (el_next_line(&pos, b.data + b.len, &line, &len)) {
		const char *colon = memchr(line, ':', len), *v;
		size_t kl, vl;
		char *key;

		if (!colon)
			continue;
		kl = (size_t)(colon - line);
		v = colon + 1;
		vl = len - kl - 1;
		el_trim(&line, &kl);
		el_trim(&v, &vl);
		if (!kl)
			continue;
		key = key_name(line, kl);
		if (strcmp(key, "model") == 0)
			el_jset_strn(dev, "name", v, vl);
		else
			el_jset_strn(dev, key, v, vl);
		free(key);
	}
	el_buf_release(&b);
}

/* nvidia-smi's "00000000:3B:00.0" -> the driver's "0000:3b:00.0". */
static char *bus_norm(const char *s, size_t n)
{
	char *b;

	while (n > 12 && *s == '0' && s[1] == '0' && memchr(s, ':', n) - (void *)s > 4) {
		s++;
		n--;
	}
	b = el_xstrndup(s, n);
	for (char *c = b; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return b;
}

/* The devices written, by bus: nvidia-smi's rows add to the driver's, never read back. */
typedef struct {
	char *bus;
	cJSON *dev;
} gpu_dev;

typedef struct {
	cJSON *arr;
	gpu_dev *v;
	size_t n, cap;
} gpu_devs;

static cJSON *device_add(gpu_devs *d, const char *bus)
{
	cJSON *dev = el_jpush_obj(d->arr);

	el_jset_str(dev, "bus", bus);
	EL_GROW(d->v, d->n + 1, d->cap);
	d->v[d->n].bus = el_xstrdup(bus);
	d->v[d->n++].dev = dev;
	return dev;
}

static cJSON *device_by_bus(const gpu_devs *d, const char *bus)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].bus, bus) == 0)
			return d->v[i].dev;
	return NULL;
}

/* Split one CSV line of nvidia-smi into at most max trimmed fields. */
static int csv_fields(const char *line, size_t len, char **f, int max)
{
	int n = 0;
	const char *s = line, *end = line + len;

	while (s <= end && n < max) {
		const char *c = memchr(s, ',', (size_t)(end - s));
		const char *e = c ? c : end;
		size_t fl = (size_t)(e - s);

		el_trim(&s, &fl);
		f[n++] = el_xstrndup(s, fl);
		if (!c)
			break;
		s = c + 1;
	}
	return n;
}

static void set_num_or_str(cJSON *dev, const char *key, const char *v)
{
	char *end;
	double d;

	if (!*v || strstr(v, "N/A") || strstr(v, "Not Supported"))
		return;
	d = strtod(v, &end);
	if (*end == '\0' && d == (long long)d)
		el_jset_int(dev, key, (long long)d);
	else
		el_jset_str(dev, key, v);
}

static void nvsmi_devices(el_probe *p, gpu_devs *devices)
{
	const char *argv[] = { "nvidia-smi",
		"--query-gpu=pci.bus_id,name,memory.total,compute_cap,pcie.link.gen.max,"
		"pcie.link.width.max,power.limit,uuid",
		"--format=csv,noheader,nounits", NULL };
	el_buf out = EL_BUF_INIT(EL_LIMIT_SMALL);
	const char *pos, *line;
	size_t len;

	if (el_probe_run(p, argv, EL_NVSMI_TIMEOUT_MS, &out) != 0) {
		el_buf_release(&out);
		return;
	}
	pos = out.data;
	while (el_next_line(&pos, out.data + out.len, &line, &len)) {
		char *f[8] = { 0 };
		int n = csv_fields(line, len, f, 8);
		char *bus;
		cJSON *dev;

		if (n == 8) {
			bus = bus_norm(f[0], strlen(f[0]));
			dev = device_by_bus(devices, bus);
			if (!dev) {
				dev = device_add(devices, bus);
				el_jset_str(dev, "name", f[1]);
			}
			set_num_or_str(dev, "memory_mib", f[2]);
			if (strcmp(f[3], "[N/A]") != 0)
				el_jset_str(dev, "compute_capability", f[3]);
			set_num_or_str(dev, "pcie_gen_max", f[4]);
			set_num_or_str(dev, "pcie_width_max", f[5]);
			el_jset_str(dev, "power_limit_w", f[6]);
			el_jset_str(dev, "uuid", f[7]);
			el_jset_str(dev, "details_source", "nvidia-smi");
			free(bus);
		}
		for (int i = 0; i < n; i++)
			free(f[i]);
	}
	el_buf_release(&out);
}

void el_probe_gpus(el_probe *p)
{
	static const char dir[] = "/proc/driver/nvidia/gpus";
	cJSON *gpu = el_probe_section(p, EL_SEC_GPU);
	gpu_devs devices = { el_jset_arr(gpu, "devices"), NULL, 0, 0 };
	const char *driver_status = p->driver_status;
	char **names = NULL;

	if (el_root_list(&p->root, dir, &names, NULL) == 0) {
		for (char **n = names; *n; n++) {
			char *sub = el_path_join(dir, *n), *info = el_path_join(sub, "information");
			read_information(p, info, device_add(&devices, *n));
			free(info);
			free(sub);
		}
	}
	el_strv_free(names);
	if (driver_status && strcmp(driver_status, "present") == 0)
		nvsmi_devices(p, &devices);
	el_jset_int(gpu, "count", (long long)devices.n);
	el_jset_str(gpu, "status",
		    devices.n > 0 || (driver_status && strcmp(driver_status, "absent") != 0) ? "present" : "absent");
	for (size_t i = 0; i < devices.n; i++)
		free(devices.v[i].bus);
	free(devices.v);
}
