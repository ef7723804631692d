// libcurl for SkirmishTelemetry's exporter. curl_easy_setopt is variadic, which Swift cannot call, so each option
// the exporter sets has a typed inline shim here.
#include <curl/curl.h>

static inline CURLcode skirmish_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode skirmish_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode skirmish_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*skirmish_curl_write_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode skirmish_curl_set_write_function(CURL *handle, skirmish_curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode skirmish_curl_get_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}
