//go:build !linux

package testenv

const seccompEnv = "FSBENCH_TEST_SECCOMP_DENY"

func runDenied(spec string) {}
