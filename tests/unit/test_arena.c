/*
 * The arena a loaded lock's cJSON document lives in (lib/lock/arena.c):
 * a document parsed into it reads like any other, can be edited with
 * cJSON's own calls (members deleted, replaced, added from malloc, keys
 * renamed) and is freed whole, and documents outside any arena keep
 * using malloc while arenas are live, on other threads too. Run under
 * `make asan`, any free() of arena memory, double free or leak fails it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "lock/arena.h"

static const char text[] = "{\"a\":{\"x\":1,\"y\":\"two\"},\"b\":[1,2,3,\"four\"],\"c\":\"sea\",\"d\":null}";

static cJSON *parse(el_arena **a)
{
	const char *end = NULL;
	cJSON *doc = el_arena_parse(a, text, sizeof(text) - 1, &end);

	assert_non_null(doc);
	assert_non_null(*a);
	return doc;
}

static void parsed_document_reads_like_any_other(void **state)
{
	el_arena *a;
	cJSON *doc = parse(&a);
	cJSON *b = cJSON_GetObjectItemCaseSensitive(doc, "b");

	(void)state;
	assert_int_equal(cJSON_GetArraySize(b), 4);
	assert_string_equal(cJSON_GetArrayItem(b, 3)->valuestring, "four");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "a"), "x")->valueint, 1);
	el_arena_delete(a, doc);
}

/*
 * A text read into the arena's room is parsed there and left whole (the
 * loader hashes it afterwards): the nodes go after it, into the rest of
 * the block or a new one when the rest is too small. A text elsewhere
 * parses the same.
 */
static void text_in_the_room_is_kept(void **state)
{
	size_t sizes[] = { 0, 1, 2 }; /* a small text; one whose nodes overflow the room; one outside it */

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		char *room, *copy, *mine = NULL;
		size_t cap, len = 0, items = sizes[k] == 0 ? 10 : 40000;
		el_arena *a = el_arena_new_room(&room, &cap);
		const char *end = NULL;
		char *t;
		cJSON *doc, *arr;

		assert_true(cap >= ((size_t)1 << 20));
		t = sizes[k] == 2 ? (mine = malloc(cap)) : room;
		assert_non_null(t);
		len += (size_t)sprintf(t + len, "{\"v\":[");
		for (size_t i = 0; i < items; i++)
			len += (size_t)sprintf(t + len, "%s\"item-%zu\"", i ? "," : "", i);
		len += (size_t)sprintf(t + len, "]}");
		assert_true(len < cap);
		copy = strdup(t);
		doc = el_arena_parse_in(a, t, len, &end);
		assert_non_null(doc);
		assert_string_equal(t, copy); /* not a byte of the text written over */
		arr = cJSON_GetObjectItemCaseSensitive(doc, "v");
		assert_int_equal(cJSON_GetArraySize(arr), (int)items);
		assert_string_equal(cJSON_GetArrayItem(arr, (int)items - 1)->valuestring,
				    items == 10 ? "item-9" : "item-39999");
		el_arena_delete(a, doc);
		free(copy);
		free(mine);
	}
}

static void edits_of_a_parsed_document_are_freed(void **state)
{
	el_arena *a;
	cJSON *doc = parse(&a), *other = cJSON_CreateObject(), *c;
	char *printed;

	(void)state;
	/* delete arena members, replace one, add malloc'd ones, move one between documents */
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "a");
	assert_true(cJSON_ReplaceItemInObjectCaseSensitive(doc, "c", cJSON_CreateString("replaced")));
	assert_true(cJSON_AddItemToObject(doc, "e", cJSON_CreateString("from malloc")));
	cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(doc, "b"), 0);
	c = cJSON_DetachItemFromObjectCaseSensitive(doc, "d");
	assert_true(cJSON_AddItemToObject(doc, "d2", c)); /* the key is malloc'd, the node the arena's */
	assert_true(cJSON_AddItemToObject(other, "copy", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(doc, "b"), 1)));
	printed = cJSON_PrintUnformatted(doc);
	assert_string_equal(printed, "{\"b\":[2,3,\"four\"],\"c\":\"replaced\",\"e\":\"from malloc\",\"d2\":null}");
	cJSON_free(printed);
	el_arena_delete(a, doc);
	/* the duplicate outlives the arena: it was malloc'd */
	printed = cJSON_PrintUnformatted(other);
	assert_string_equal(printed, "{\"copy\":[2,3,\"four\"]}");
	cJSON_free(printed);
	cJSON_Delete(other);
}

static void bad_json_leaves_no_arena(void **state)
{
	el_arena *a = (el_arena *)&a;
	const char bad[] = "{\"a\":[1,2,{\"b\":\"unterminated}]}";
	const char *end = NULL;

	(void)state;
	assert_null(el_arena_parse(&a, bad, sizeof(bad) - 1, &end));
	assert_null(a);
	assert_non_null(end);
}

static void large_documents_take_more_blocks(void **state)
{
	size_t n = 200000, len = 0;
	char *big = malloc(n * 12 + 16);
	el_arena *a;
	const char *end;
	cJSON *doc;

	(void)state;
	/* a text whose nodes take far more than twice its size: the arena grows */
	big[len++] = '[';
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(big + len, "%s[]", i ? "," : "");
	big[len++] = ']';
	big[len] = 0;
	doc = el_arena_parse(&a, big, len, &end);
	assert_non_null(doc);
	assert_int_equal(cJSON_GetArraySize(doc), (int)n);
	el_arena_delete(a, doc);
	free(big);
}

static void *parse_and_build(void *arg)
{
	for (int i = 0; i < 200; i++) {
		el_arena *a;
		const char *end;
		cJSON *doc = el_arena_parse(&a, text, sizeof(text) - 1, &end);
		cJSON *built = cJSON_CreateObject();

		cJSON_AddStringToObject(built, "k", "v");
		cJSON_AddItemToObject(doc, "built", built);
		cJSON_Delete(cJSON_Duplicate(doc, 1));
		el_arena_delete(a, doc);
	}
	return arg;
}

static void threads_parse_and_build_at_once(void **state)
{
	pthread_t t[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, parse_and_build, NULL), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

int main(void)
{
	envlock_ctx *ctx;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parsed_document_reads_like_any_other),
		cmocka_unit_test(text_in_the_room_is_kept),
		cmocka_unit_test(edits_of_a_parsed_document_are_freed),
		cmocka_unit_test(bad_json_leaves_no_arena),
		cmocka_unit_test(large_documents_take_more_blocks),
		cmocka_unit_test(threads_parse_and_build_at_once),
	};
	int rc;

	envlock_ctx_new(&ctx); /* installs the hooks */
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	envlock_ctx_free(ctx);
	return rc;
}
