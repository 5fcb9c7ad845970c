package report

import "strings"

// notSupportedLine names the items the storage cannot do (objbench's chmod
// on S3), which have no figures to put in the table.
func notSupportedLine(r *Result) string {
	if names := unsupported(r); len(names) > 0 {
		return "Not supported by this storage, so not measured: " + strings.Join(names, ", ")
	}
	return ""
}

// unsupported are the titles of the phases the storage cannot do.
func unsupported(r *Result) []string {
	var names []string
	for _, p := range r.Phases {
		if p.Value.Unit == UnitNotSupported {
			names = append(names, p.Title)
		}
	}
	return names
}
