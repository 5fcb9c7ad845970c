package object

import "os"

// The drivers of fsbench, in one explicit list. A new driver is added here
// and nowhere else.
func init() {
	for _, d := range []Driver{
		s3Driver(providerS3),
		s3Driver(providerMinIO),
		s3Driver(providerCOS),
	} {
		Register(d)
	}
}

func osGetenv(k string) string { return os.Getenv(k) }
