#!/bin/sh
# Deliberately broken: every check passes, then the program fails.
echo "PASS runner-fixture: a check that passed"
exit 3
