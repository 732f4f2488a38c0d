# make test-fleet: the README's Slurm recipe on a real cluster on this host
# (own munged, slurmctld and three slurmd on loopback; tests/fleet/run.sh).
# Needs root and Debian's munge slurmctld slurmd slurm-client; skips, saying
# why, without them. Tests the static binary when there is one, else the
# dynamic one (built first); ENVLOCK_FLEET=PATH tests any other.
ENVLOCK_FLEET ?= $(if $(wildcard $(STATIC_BUILD)/envlock),$(STATIC_BUILD)/envlock,$(BUILD)/envlock)

.PHONY: test-fleet
test-fleet: $(filter $(BUILD)/envlock,$(ENVLOCK_FLEET))
	ENVLOCK=$(abspath $(ENVLOCK_FLEET)) sh tests/fleet/run.sh
