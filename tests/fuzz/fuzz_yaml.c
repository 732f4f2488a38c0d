/*
 * A YAML config base: el_cfg_yaml_parse reads the input as it is, with
 * no NUL after it, within the 1 MiB its caller allows.
 */
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, msg[256];
	cJSON *out = NULL;

	if (size > 1 << 20 || !(text = malloc(size ? size : 1)))
		return 0;
	memcpy(text, data, size);
	if (el_cfg_yaml_parse("base.yaml", text, size, &out, msg, sizeof(msg)) == 0)
		cJSON_Delete(out);
	free(text);
	return 0;
}
