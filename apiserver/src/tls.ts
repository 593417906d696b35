/**
 * A fixed test certificate authority for the loopback API server, valid for 100 years, made with
 * openssl for this project. Its keys are public: never trust this CA outside tests.
 *
 * The server certificate covers 127.0.0.1, ::1 and localhost. The client certificate (CN
 * rx-informer-test-user) lets tests exercise client-certificate authentication.
 */
export interface TestCertificates {
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
}

/** The fixed test CA, server and client key pairs, as PEM strings. */
export const testCertificates: TestCertificates = Object.freeze({
  caCert: [
    '-----BEGIN CERTIFICATE-----',
    'MIIBozCCAUmgAwIBAgIUZnuF1Qpe7pzxh7+Z7tBO/v349G8wCgYIKoZIzj0EAwIw',
    'HjEcMBoGA1UEAwwTcngtaW5mb3JtZXIgdGVzdCBDQTAgFw0yNjEyMDIwODQ3MDZa',
    'GA8yMTI2MTEwODA4NDcwNlowHjEcMBoGA1UEAwwTcngtaW5mb3JtZXIgdGVzdCBD',
    'QTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABAMNYM4uuF+WGU+Ezmmr8USBBed4',
    '+i8yl0NAT4eZIcnoCIN2VajG4zwaN1pBm3sM8/VfrveLE7WZ31BQw1Gm1zmjYzBh',
    'MB0GA1UdDgQWBBRz/6MUyykvWuCwU4M+ffrOXc/E/jAfBgNVHSMEGDAWgBRz/6MU',
    'yykvWuCwU4M+ffrOXc/E/jAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwIB',
    'BjAKBggqhkjOPQQDAgNIADBFAiEAv7Dh0JLWwkRlNZrqtnSxNyhHp8fFvtPfN2CT',
    'F1NbLCkCIHiFByfAKMhUQrtVnFtrXa8FQiy82vsoWqgeJv+RvrLP',
    '-----END CERTIFICATE-----',
  ].join('\n') + '\n',
  serverCert: [
    '-----BEGIN CERTIFICATE-----',
    'MIIB6zCCAZCgAwIBAgIUEjh4aLFPZC4XCHPp566YM7efVWYwCgYIKoZIzj0EAwIw',
    'HjEcMBoGA1UEAwwTcngtaW5mb3JtZXIgdGVzdCBDQTAgFw0yNjEyMDIwODQ3MDZa',
    'GA8yMTI2MTEwODA4NDcwNlowKTEnMCUGA1UEAwwecngtaW5mb3JtZXIgbG9vcGJh',
    'Y2sgYXBpc2VydmVyMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEeOobLh1oMm3s',
    'hhSJgOS7HakYnnP3n2+nlwBntB32eWZwte3UwU3I5x61XSZyBjIyc8lNPWjzc3TE',
    '4H9Wa2Ycf6OBnjCBmzAsBgNVHREEJTAjhwR/AAABhxAAAAAAAAAAAAAAAAAAAAAB',
    'gglsb2NhbGhvc3QwCQYDVR0TBAIwADALBgNVHQ8EBAMCBaAwEwYDVR0lBAwwCgYI',
    'KwYBBQUHAwEwHQYDVR0OBBYEFMNHbThwFA1DvuZwsVW7uV3cbh3MMB8GA1UdIwQY',
    'MBaAFHP/oxTLKS9a4LBTgz59+s5dz8T+MAoGCCqGSM49BAMCA0kAMEYCIQDK4QGb',
    '4TmUEQpPAxKun5OOQakn6ppIAvGW9z4ZLVQiRgIhAPdrcMWUbwiTKm4KoL12dLOQ',
    '/VFfsGXlH7UCA5eSepRl',
    '-----END CERTIFICATE-----',
  ].join('\n') + '\n',
  serverKey: [
    '-----BEGIN PRIVATE KEY-----',
    'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgJtRpP0UN8VLgGrTc',
    'Q0ynbDell2evOlMla79n7MGMLqqhRANCAAR46hsuHWgybeyGFImA5LsdqRiec/ef',
    'b6eXAGe0HfZ5ZnC17dTBTcjnHrVdJnIGMjJzyU09aPNzdMTgf1ZrZhx/',
    '-----END PRIVATE KEY-----',
  ].join('\n') + '\n',
  clientCert: [
    '-----BEGIN CERTIFICATE-----',
    'MIIByTCCAXCgAwIBAgIUEjh4aLFPZC4XCHPp566YM7efVWcwCgYIKoZIzj0EAwIw',
    'HjEcMBoGA1UEAwwTcngtaW5mb3JtZXIgdGVzdCBDQTAgFw0yNjEyMDIwODQ3MDZa',
    'GA8yMTI2MTEwODA4NDcwNlowOTEeMBwGA1UEAwwVcngtaW5mb3JtZXItdGVzdC11',
    'c2VyMRcwFQYDVQQKDA5zeXN0ZW06bWFzdGVyczBZMBMGByqGSM49AgEGCCqGSM49',
    'AwEHA0IABKkXgGGmkkBH6TdyHhS9ecboxvNhvwlPxNRDoKpLCRY/eqHDCfruwEet',
    'gLp+dwsmphE7zDl0IKdNJqEhUYRhAq+jbzBtMAkGA1UdEwQCMAAwCwYDVR0PBAQD',
    'AgeAMBMGA1UdJQQMMAoGCCsGAQUFBwMCMB0GA1UdDgQWBBR5Jgp48/nREwkdMio8',
    'AwBF1weLNzAfBgNVHSMEGDAWgBRz/6MUyykvWuCwU4M+ffrOXc/E/jAKBggqhkjO',
    'PQQDAgNHADBEAiAiKO6ahU7uvkP++W0By+ruY03HoDzV2HsXz3XlqgFFdQIgZdw8',
    '/f6xpLt5AaCZ6LRSDvgW1NpdI87wcMfHBJhVBQs=',
    '-----END CERTIFICATE-----',
  ].join('\n') + '\n',
  clientKey: [
    '-----BEGIN PRIVATE KEY-----',
    'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgZ7HXoG57U2JIOKpi',
    'g9ftQuXLoj4ws7DThnAU4Ad2gMqhRANCAASpF4BhppJAR+k3ch4UvXnG6MbzYb8J',
    'T8TUQ6CqSwkWP3qhwwn67sBHrYC6fncLJqYRO8w5dCCnTSahIVGEYQKv',
    '-----END PRIVATE KEY-----',
  ].join('\n') + '\n',
});
