import selfsigned from 'selfsigned'

/** A self-signed certificate and its private key, PEM-encoded. */
export type SelfSignedCert = { cert: string; key: string }

/**
 * Generates a self-signed certificate valid for `127.0.0.1`, `::1` and `localhost` (SAN),
 * usable both as the server certificate and as the CA a client trusts.
 */
export function generateLocalhostCert(): Promise<SelfSignedCert> {
  const attrs = [{ name: 'commonName', value: 'localhost' }]
  const extensions = [
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: 'localhost' }, // DNS
        { type: 7, ip: '127.0.0.1' }, // IP
        { type: 7, ip: '::1' },
      ],
    },
  ]
  return new Promise((resolve, reject) => {
    selfsigned.generate(attrs, { days: 2, keySize: 2048, algorithm: 'sha256', extensions }, (err, pems) => {
      if (err) reject(err)
      else resolve({ cert: pems.cert, key: pems.private })
    })
  })
}
