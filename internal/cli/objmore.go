package cli

import (
	"github.com/spf13/cobra"
)

// objMoreFlags are objbench's flags for several endpoints and for the
// multipart workload.
type objMoreFlags struct {
	partSize string
}

func addObjMoreFlags(cmd *cobra.Command, o *ObjbenchOptions) {
	f := cmd.Flags()
	f.StringSliceVar(&o.Endpoints, "endpoints", nil, "s3, minio, cos: send the requests in turn to these endpoints, `URL,...`: http(s)://HOST:PORT of the store's nodes or gateways (the store URL gives bucket and credentials); rows per endpoint")
	f.StringVar(&o.more.partSize, "part-size", "5M", "multipart: size of each part but the last (at least the store's minimum, 5 MiB on S3)")
	f.IntVar(&o.PartsInFlight, "parts-in-flight", o.PartsInFlight, "multipart: parts of one object uploaded at the same time")
}

// resolveMore parses the flags of addObjMoreFlags into the options.
func (o *ObjbenchOptions) resolveMore(cmd *cobra.Command) error {
	f := cmd.Flags()
	if o.Workload != "multipart" {
		for _, n := range []string{"part-size", "parts-in-flight"} {
			if f.Changed(n) {
				return Usagef("--%s goes with --workload multipart", n)
			}
		}
	}
	return parseSizes(sizeArg{"part-size", o.more.partSize, &o.PartSize, 0})
}
