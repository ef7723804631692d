// json-c through one header; the wrappers keep Swift call sites short and typed.
#ifndef SKIRMISH_CJSONC_SHIM_H
#define SKIRMISH_CJSONC_SHIM_H

#include <json-c/json.h>

/// Adds `value` under `key`, taking ownership of `value`; the key is copied.
static inline void skirmish_json_add(struct json_object *object, const char *key, struct json_object *value) {
    json_object_object_add(object, key, value);
}

/// The compact serialisation of `object`, valid until `object` is released; `length` receives its size.
static inline const char *skirmish_json_plain(struct json_object *object, size_t *length) {
    return json_object_to_json_string_length(object, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, length);
}

#endif
