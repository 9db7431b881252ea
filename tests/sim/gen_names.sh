#!/bin/sh
# The callback names CUPTI gives, from its own id headers:
# CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020 = 20 -> { 20, "cudaMalloc_v3020" }.
# usage: gen_names.sh CUPTI_INCLUDE_DIR > cbid_names.h
inc=$1
for d in RUNTIME DRIVER; do
	f=$inc/cupti_$(echo $d | tr A-Z a-z)_cbid.h
	echo "static const struct cbid_name ${d}_NAMES[] = {"
	sed -n "s/^ *CUPTI_${d}_TRACE_CBID_\([A-Za-z0-9_]*\) *= *\([0-9][0-9]*\),.*/\2 \1/p" "$f" |
		grep -v -e ' INVALID$' -e ' SIZE$' -e ' FORCE_INT$' |
		awk '{ printf "\t{ %s, \"%s\" },\n", $1, $2 }'
	echo "};"
done
