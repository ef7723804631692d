// json-c for SkirmishTelemetry's JSON payloads (OTLP). Only this header is seen by Swift.
#include <json-c/json.h>
