// Logging: every subsystem includes this (through core.h).
#pragma once
#include "config.h"

namespace engine {

enum class LogLevel { Trace, Debug, Info, Warn, Error };

void log_write(LogLevel level, const char *subsystem, const char *message);
void log_set_level(LogLevel level);
LogLevel log_level();

struct LogScope {
    explicit LogScope(const char *name);
    ~LogScope();
    const char *name;
};

} // namespace engine

#define ENGINE_LOG(level, sub, msg) ::engine::log_write(::engine::LogLevel::level, sub, msg)
