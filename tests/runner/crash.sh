#!/bin/sh
# Deliberately broken: a FAIL line, then a crash (SIGSEGV).
echo "FAIL runner-fixture: a check that failed"
kill -SEGV $$
