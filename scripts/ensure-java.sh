#!/bin/sh
# Spark (and so the tests that drive Hive 2.3's own classes) needs Java 17.
# Install it where it is missing and we may; otherwise say how. Those tests skip without Java.
# Maven fetches Hive 3.1 and 4.0's jars from Maven Central for the tests that judge with them.
if ! command -v mvn >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-java: installing maven for the Hive 3.1/4.0 tests" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven) >/dev/null 2>&1 \
        || echo "ensure-java: could not install Maven; the Hive 3.1/4.0 tests will be skipped" >&2
fi
if java -version 2>&1 | grep -q 'version "\(17\|21\)'; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-java: installing openjdk-17-jre-headless for the Spark tests" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless) >/dev/null 2>&1 \
        || echo "ensure-java: could not install Java 17; Spark tests will be skipped" >&2
else
    echo "ensure-java: Java 17 not found; install it (e.g. 'sudo apt-get install openjdk-17-jre-headless' or 'brew install openjdk@17') to run the Spark tests" >&2
fi
exit 0
