// Package all registers every driver of pkg/object. Import it for its side
// effect wherever stores are opened by name (object.Open):
//
//	import _ "github.com/fsbench/fsbench/pkg/object/all"
//
// A new driver is a package of its own that calls object.Register in its
// init, and is added here and nowhere else.
//
// It holds no code of its own but the imports.
package all

import (
	_ "github.com/fsbench/fsbench/pkg/object/file"
	_ "github.com/fsbench/fsbench/pkg/object/nfs"
	_ "github.com/fsbench/fsbench/pkg/object/s3"
)
