// Package containerimage tests fsbench's container image: it builds the
// image, checks the files of its layers, and runs bench, objbench and an
// agent from it beside the plain binary.
//
// It has no code of its own and nothing imports it; its tests need podman
// (internal/testenv starts it) and skip without it, failing under CI.
package containerimage
