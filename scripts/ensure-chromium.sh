#!/bin/sh
# The tests that render ls --format svg (and, later, the report) in a real browser use Debian's
# Chromium, headless. Install it where it is missing and we may; those tests skip without it.
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-chromium: installing chromium for the browser tests" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
        || echo "ensure-chromium: could not install Chromium; the browser tests will be skipped" >&2
else
    echo "ensure-chromium: Chromium not found; install it (e.g. 'sudo apt-get install chromium') to run the browser tests" >&2
fi
exit 0
