package testenv

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// minioModule is the module the tests' MinIO server is built from.
const minioModule = "github.com/minio/minio"

// pinRE finds the pinned version in install.sh:
// MINIO_VERSION="${MINIO_VERSION:-v0.0.0-...}".
var pinRE = regexp.MustCompile(`(?m)^MINIO_VERSION="\$\{MINIO_VERSION:-(v[^}"]+)\}"`)

// parseMinIOPin returns the MinIO version that install.sh pins.
func parseMinIOPin(script string) (string, error) {
	m := pinRE.FindStringSubmatch(script)
	if m == nil {
		return "", fmt.Errorf("install.sh pins no MinIO version (no MINIO_VERSION line)")
	}
	return m[1], nil
}

// checkMinIOVersion compares the module and version a server binary was
// built from with the pin. A binary of another version, or one whose
// build does not say (built another way than by install.sh), is refused:
// every machine tests the same server.
func checkMinIOVersion(path, version, pin string) error {
	switch {
	case path != minioModule:
		return fmt.Errorf("built from %q, not %s", path, minioModule)
	case version == "" || version == "(devel)":
		return fmt.Errorf("built from an unknown version of %s, install.sh pins %s", minioModule, pin)
	case version != pin:
		return fmt.Errorf("version %s, install.sh pins %s", version, pin)
	}
	return nil
}

// minioPin is the pinned version: MINIO_VERSION from the environment, as
// install.sh takes it, else the one in install.sh.
func minioPin() (string, error) {
	if v := os.Getenv("MINIO_VERSION"); v != "" {
		return v, nil
	}
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "internal", "testenv", "install.sh"))
	if err != nil {
		return "", err
	}
	return parseMinIOPin(string(b))
}

// checkMinIOBinary tells whether bin is the pinned MinIO server.
func checkMinIOBinary(bin string) error {
	pin, err := minioPin()
	if err != nil {
		return err
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("%s: no Go build information: %w", bin, err)
	}
	if err := checkMinIOVersion(info.Main.Path, info.Main.Version, pin); err != nil {
		return fmt.Errorf("%s: %w (run internal/testenv/install.sh to rebuild it)", bin, err)
	}
	return nil
}
