/*
 * The config rule kinds: an OpenMMLab config judged against the machine
 * it runs on: what the config needs installed, its data loading against
 * cores and memory, AMP against the GPU, the learning rate against the
 * total batch, the model's classes against the annotation file, cuDNN's
 * autotuner and the files it names. They read the facts of the config's
 * effective value (config/facts.h) and what the probe recorded of the
 * files it names (lib/config/files.c).
 */
#ifndef EL_CFGCHECK_H
#define EL_CFGCHECK_H

#include "config/facts.h"
#include "rules/rules.h"

/*
 * The config rule kinds (kinds.c), { NULL, NULL }-terminated: envlock's
 * rules (lib/check) load with them beside the lock's (rules/kinds.c).
 */
extern const el_rule_kind el_config_kinds[];

#endif
