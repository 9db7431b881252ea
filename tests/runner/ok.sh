#!/bin/sh
echo "PASS runner-fixture: a check that passed"
