package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/pkg/object"
)

// storeFlags are the flags that name an object store and reach it: its
// type, credentials, TLS, addressing and time limit. objbench, train and
// checkpoint declare them alike, so that each flag has one meaning and one
// help text in all three; the values land in the command's own Storage and
// object.Config.
type storeFlags struct {
	storage *string
	cfg     *object.Config

	secretKey, sessionToken         string
	secretKeyFile, sessionTokenFile string
	timeout                         string
}

// storeFlagNames are the flags of add; with train and checkpoint, every
// one of them but --storage needs --storage.
var storeFlagNames = []string{"access-key", "secret-key", "secret-key-file", "session-token", "session-token-file",
	"anonymous", "region", "addressing", "retries", "checksum", "sign-payload", "insecure", "ca-cert", "timeout"}

// add declares the flags on cmd, storing into storage and cfg.
func (s *storeFlags) add(cmd *cobra.Command, storage *string, cfg *object.Config) {
	s.storage, s.cfg = storage, cfg
	f := cmd.Flags()
	f.StringVar(storage, "storage", *storage, "storage type: "+strings.Join(object.Names(), ", "))
	f.StringVar(&cfg.AccessKey, "access-key", "", "access key (env ACCESS_KEY)")
	f.StringVar(&s.secretKey, "secret-key", "", "secret key (env SECRET_KEY, or --secret-key-file; prefer those, a flag is visible in ps)")
	f.StringVar(&s.secretKeyFile, "secret-key-file", "", "read the secret key from `FILE`")
	f.StringVar(&s.sessionToken, "session-token", "", "session token of temporary credentials (env SESSION_TOKEN, or --session-token-file; prefer those, a flag is visible in ps)")
	f.StringVar(&s.sessionTokenFile, "session-token-file", "", "read the session token from `FILE`")
	markFiles(f, fileIn, "secret-key-file", "session-token-file")
	f.BoolVar(&cfg.Anonymous, "anonymous", false, "send unsigned requests, for public buckets")
	f.StringVar(&cfg.Region, "region", "", "region (default: from the URL, then AWS_REGION, then us-east-1)")
	f.StringVar(&cfg.Addressing, "addressing", "auto", "bucket addressing: auto (from the URL form), path or virtual")
	f.IntVar(&cfg.Retries, "retries", 0, "retry a failed request up to N times (default 0: problems are seen, not hidden)")
	f.StringVar(&cfg.Checksum, "checksum", "when-required", "request checksums: when-required, or when-supported (aws-chunked trailers, which some S3-compatible stores reject)")
	f.BoolVar(&cfg.SignPayload, "sign-payload", false, "sign the SHA-256 of every request body, for S3 stores that refuse UNSIGNED-PAYLOAD (costs a pass over the data)")
	f.BoolVar(&cfg.Insecure, "insecure", false, "do not verify the server's TLS certificate")
	f.StringVar(&cfg.CACertFile, "ca-cert", "", "also trust the CA certificates in this PEM `FILE`")
	markFiles(f, fileIn, "ca-cert")
	f.StringVar(&s.timeout, "timeout", "10s", "bound on connecting and on every wait for the store: a request during which nothing moves for this long fails")
}

// resolve checks the flags and fills the configuration; url is the
// command's argument, checked against the storage type.
func (s *storeFlags) resolve(app *App, cmd *cobra.Command, url string) error {
	d, terr := time.ParseDuration(s.timeout)
	if terr != nil || d <= 0 {
		return Usagef("--timeout %q: want a positive duration such as 10s", s.timeout)
	}
	s.cfg.Timeout = d
	*s.storage = strings.ToLower(*s.storage)
	if err := s.readSecrets(cmd); err != nil {
		return err
	}
	s.cfg.Getenv = app.IO.Getenv
	switch s.cfg.Addressing {
	case "auto", "path", "virtual":
	default:
		return Usagef("--addressing must be auto, path or virtual (got %q)", s.cfg.Addressing)
	}
	switch s.cfg.Checksum {
	case "when-required", "when-supported":
	default:
		return Usagef("--checksum must be when-required or when-supported (got %q)", s.cfg.Checksum)
	}
	if s.cfg.Retries < 0 {
		return Usagef("--retries must not be negative")
	}
	if *s.storage == "file" && strings.Contains(url, "://") && !strings.HasPrefix(url, "file://") {
		return Usagef("%s looks like a URL, not a directory: did you forget --storage (s3, minio, cos, nfs)?", object.RedactURL(url))
	}
	return nil
}

// resolveOptional is resolve for the commands that work on a mounted
// directory unless --storage is given: without it, the other flags of the
// store have nothing to apply to.
func (s *storeFlags) resolveOptional(app *App, cmd *cobra.Command, url string) error {
	if *s.storage == "" {
		for _, n := range storeFlagNames {
			if cmd.Flags().Changed(n) {
				return Usagef("--%s is for an object store: give --storage too (%s)", n, strings.Join(object.Names(), ", "))
			}
		}
		return nil
	}
	if err := s.resolve(app, cmd, url); err != nil {
		return err
	}
	for _, n := range object.Names() {
		if n == *s.storage {
			return nil
		}
	}
	return Usagef("--storage %q: want one of %s", *s.storage, strings.Join(object.Names(), ", "))
}

// readSecrets takes the secret key and session token from their flags or
// from the files their -file flags name.
func (s *storeFlags) readSecrets(cmd *cobra.Command) error {
	for _, x := range []struct {
		flag        string
		value, file string
		dst         *object.Secret
	}{{"secret-key", s.secretKey, s.secretKeyFile, &s.cfg.SecretKey}, {"session-token", s.sessionToken, s.sessionTokenFile, &s.cfg.SessionToken}} {
		v := x.value
		if cmd.Flags().Changed(x.flag + "-file") {
			if cmd.Flags().Changed(x.flag) {
				return Usagef("--%s and --%s-file: give one", x.flag, x.flag)
			}
			var err error
			if v, err = readSecretFile("--"+x.flag+"-file", x.file); err != nil {
				return err
			}
		}
		*x.dst = object.NewSecret(v)
	}
	return nil
}
