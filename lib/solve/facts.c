/* The machine as the solver sees it: what a lock's view records of its driver, GPUs, glibc, compilers and Python. */
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "solve.h"
#include "util/version.h"
#include "util/xalloc.h"

void sv_machine_read(sv_machine *m, const el_view *v)
{
	const el_kb *kb = el_kb_builtin();

	memset(m, 0, sizeof(*m));
	m->host = v->hostname;
	m->os = v->system.os.st.present ? (v->system.os.pretty_name ? v->system.os.pretty_name : v->system.os.name) : NULL;
	m->glibc = v->system.glibc.st.present ? v->system.glibc.version : NULL;
	m->gcc = v->compilers.st.present && v->compilers.def.recorded ? v->compilers.def.version : NULL;
	m->python = v->python.st.present ? v->python.version : NULL;
	m->gpu_recorded = v->gpu.st.recorded;
	m->driver = v->gpu.driver.st.present ? v->gpu.driver.version : NULL;
	m->gpus = el_xcalloc(v->gpu.ndevices + 1, sizeof(*m->gpus));
	for (size_t i = 0; i < v->gpu.ndevices; i++) {
		sv_gpu *g = &m->gpus[m->ngpus++];
		const el_gpu_device *d = &v->gpu.devices[i];

		g->name = d->name ? d->name : "GPU";
		if (d->compute_capability && *d->compute_capability) {
			g->cc = d->compute_capability;
			g->cc_source = "nvidia-smi, as the lock records it";
		} else {
			g->cc = el_kb_gpu_compute_capability(kb, d->name, &g->cc_source);
		}
		g->arch = el_kb_gpu_arch_of(kb, g->cc);
	}
	m->nvcc = el_xcalloc(v->cuda.ntoolkits + 1, sizeof(*m->nvcc));
	for (size_t i = 0; i < v->cuda.ntoolkits; i++) {
		const el_toolkit *tk = &v->cuda.toolkits[i];
		const char *ver = el_toolkit_version(tk);

		if (tk->nvcc.recorded && ver)
			m->nvcc[m->nnvcc++] = ver;
	}
}

void sv_machine_release(sv_machine *m)
{
	free(m->gpus);
	free(m->nvcc);
	memset(m, 0, sizeof(*m));
}

bool sv_driver_meets(const sv_machine *m, const char *min)
{
	if (m->driver_branch > 0)
		return m->driver_branch >= el_version_major(min);
	return m->driver && min && envlock_version_cmp(m->driver, min) >= 0;
}

long sv_newest_branch(const sv_machine *m, const el_kb *kb)
{
	long newest = el_version_major(el_kb_newest_driver(kb)), best = 0;

	for (size_t i = 0; i < m->ngpus; i++) {
		long b = m->gpus[i].arch && m->gpus[i].arch->last_branch > 0 ? m->gpus[i].arch->last_branch : newest;

		if (!best || b < best)
			best = b;
	}
	return best ? best : (m->driver ? newest : 0);
}
