#!/usr/bin/env bash
# Makes a throwaway CA and certificates for local TLS runs and tests, with openssl:
#   ca.pem / ca.key                 the CA (10 years)
#   server.pem / server.key         localhost + 127.0.0.1, signed by the CA
#   client.pem / client.key         a client certificate (mutual TLS), signed by the CA
#   wrong-name.pem / wrong-name.key signed by the CA, but for other.example only
#   expired.pem / expired.key       signed by the CA, valid only in 2020
#   rogue.pem / rogue.key           localhost, signed by another CA (rogue-ca): an unknown issuer
# Never use these outside a lab: the keys sit next to the certificates.
#   scripts/make-test-certs.sh DIR
set -euo pipefail
dir=${1:?usage: scripts/make-test-certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
q() { openssl "$@" >/dev/null 2>&1; }

q req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 \
  -subj "/CN=ingestbench test CA" -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign"

leaf() { # name subject san [extra openssl x509 args...]
  local name=$1 subj=$2 san=$3; shift 3
  q req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subj"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=%s\n' "$san" > "$name.ext"
  q x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$name.pem" -extfile "$name.ext" "$@"
  rm -f "$name.csr" "$name.ext"
}
leaf server "/CN=localhost" "DNS:localhost,IP:127.0.0.1" -days 825
leaf client "/CN=ingestbench client" "DNS:ingestbench-client" -days 825
leaf wrong-name "/CN=other.example" "DNS:other.example" -days 825
# Expired: backdated validity.
q req -newkey rsa:2048 -nodes -keyout expired.key -out expired.csr -subj "/CN=localhost"
printf 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' > expired.ext
if openssl x509 -help 2>&1 | grep -q -- '-not_before'; then
  q x509 -req -in expired.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out expired.pem -extfile expired.ext \
    -not_before 20200101000000Z -not_after 20200201000000Z
else
  # OpenSSL 3.0: sign with a throwaway "ca" database to set explicit dates.
  mkdir -p ca-db && : > ca-db/index.txt && echo 1000 > ca-db/serial
  cat > ca-db/ca.cnf <<CNF
[ ca ]
default_ca = tca
[ tca ]
database = ca-db/index.txt
serial = ca-db/serial
new_certs_dir = ca-db
default_md = sha256
policy = any
[ any ]
commonName = supplied
CNF
  q ca -batch -config ca-db/ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr -out expired.pem \
    -startdate 20200101000000Z -enddate 20200201000000Z -extfile expired.ext -notext
  rm -rf ca-db
fi
rm -f expired.csr expired.ext
q req -x509 -newkey rsa:2048 -nodes -keyout rogue-ca.key -out rogue-ca.pem -days 3650 \
  -subj "/CN=not the ingestbench test CA" -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign"
q req -newkey rsa:2048 -nodes -keyout rogue.key -out rogue.csr -subj "/CN=localhost"
printf 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' > rogue.ext
q x509 -req -in rogue.csr -CA rogue-ca.pem -CAkey rogue-ca.key -CAcreateserial -out rogue.pem -extfile rogue.ext -days 825
rm -f rogue.csr rogue.ext rogue-ca.srl rogue-ca.key
chmod 600 ./*.key
rm -f ca.srl
echo "certificates in $dir: ca.pem server.pem client.pem wrong-name.pem expired.pem rogue.pem (+ .key)"
