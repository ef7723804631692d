// Typed wrappers around libcurl's variadic calls, which Swift cannot call directly.
#ifndef SKIRMISH_CCURL_SHIM_H
#define SKIRMISH_CCURL_SHIM_H

#include <curl/curl.h>

typedef size_t (*skirmish_curl_write_fn)(char *data, size_t size, size_t count, void *userdata);

static inline CURLcode skirmish_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode skirmish_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode skirmish_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode skirmish_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode skirmish_curl_setopt_write_function(CURL *handle, skirmish_curl_write_fn function) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, function);
}

static inline CURLcode skirmish_curl_setopt_body(CURL *handle, const char *body, long length) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE, length);
    if (code != CURLE_OK) {
        return code;
    }
    return curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body);
}

/// Initialises libcurl once per process; call before any other thread uses curl.
static inline CURLcode skirmish_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

/// Basic authentication (CURLAUTH_BASIC is a cast macro Swift cannot import).
static inline CURLcode skirmish_curl_setopt_basic_auth(CURL *handle, const char *user, const char *password) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_USERNAME, user);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_PASSWORD, password);
    return code;
}

static inline long skirmish_curl_response_code(CURL *handle) {
    long code = 0;
    if (curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) {
        return 0;
    }
    return code;
}

#endif
