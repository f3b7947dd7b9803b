#!/usr/bin/env bash
# Makes the TLS test fixtures of this directory: a test CA and a certificate for
# `applinks.test` that it signs, both valid from 2000 to 2125 (so that no machine's clock,
# however wrong, sees them expired or not yet valid). Run once; the outputs are committed.
# The keys are for the tests only and protect nothing.
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/issued" && touch "$work/index.txt" && echo 1000 >"$work/serial"
cat >"$work/ca.cnf" <<CONF
[ca]
default_ca = test
[test]
dir = $work
database = $work/index.txt
new_certs_dir = $work/issued
serial = $work/serial
default_md = sha256
policy = anything
unique_subject = no
copy_extensions = none
[anything]
organizationName = optional
commonName = supplied
[ca_extensions]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[leaf_extensions]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:applinks.test
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
CONF
dates=(-startdate 20000101000000Z -enddate 21250101000000Z)
# The CA (its key is thrown away: nothing else will ever be signed with it).
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/ca.key"
openssl req -new -key "$work/ca.key" -subj "/O=Bolts tests/CN=Bolts App Links test CA" -out "$work/ca.csr"
openssl ca -batch -config "$work/ca.cnf" -selfsign -keyfile "$work/ca.key" -in "$work/ca.csr" \
    -extensions ca_extensions "${dates[@]}" -notext -out ca.pem
# The server's certificate, for applinks.test only.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out applinks.test.key
openssl req -new -key applinks.test.key -subj "/O=Bolts tests/CN=applinks.test" -out "$work/leaf.csr"
openssl ca -batch -config "$work/ca.cnf" -cert ca.pem -keyfile "$work/ca.key" -in "$work/leaf.csr" \
    -extensions leaf_extensions "${dates[@]}" -notext -out applinks.test.pem
openssl verify -CAfile ca.pem applinks.test.pem
