// Package schema holds the JSON Schemas (draft 2020-12) of fsbench's
// machine-readable output: Result, the result of a benchmark run
// (result.schema.json), and Compare, the output of `fsbench compare -o
// json` (compare.schema.json). The files document every field; a test
// validates real output against them.
//
// It holds no Go types of the result: package report owns the model, these
// files describe it.
package schema

import _ "embed"

// Result is the JSON Schema of a benchmark result.
//
//go:embed result.schema.json
var Result []byte

// Compare is the JSON Schema of a comparison.
//
//go:embed compare.schema.json
var Compare []byte

// Verify is the JSON Schema of a verification.
//
//go:embed verify.schema.json
var Verify []byte
