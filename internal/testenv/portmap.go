package testenv

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/willscott/go-nfs-client/nfs/rpc"
	"github.com/willscott/go-nfs-client/nfs/xdr"
)

// nfs-ganesha cannot run without registering its services with the
// portmapper, and it removes their registrations (whoever made them) when
// it starts and when it stops. So that the test server leaves another NFS
// server on this host as it found it, StartNFS notes the registrations of
// these programs beforehand, and Stop puts them back.
var nfsPrograms = []uint32{100003, 100005, 100021, 100011, 100227} // NFS, MOUNT, NLM, RQUOTA, NFSACL

const (
	pmapSet   = 1
	pmapUnset = 2
	pmapDump  = 4
)

type pmapCall struct {
	rpc.Header
	Args any
}

// portmapCall calls the portmapper on 127.0.0.1 (from a reserved port when
// root, as it wants for changes).
func portmapCall(proc uint32, args any, decode func(r io.Reader) error) error {
	c, err := rpc.DialTCP("tcp", "127.0.0.1:111", true)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.Call(&pmapCall{rpc.Header{Rpcvers: 2, Prog: rpc.PmapProg, Vers: rpc.PmapVers, Proc: proc,
		Cred: rpc.AuthNull, Verf: rpc.AuthNull}, args})
	if err != nil {
		return err
	}
	return decode(res)
}

type noArgs struct{}

// portmapDump lists the registrations of the given programs.
func portmapDump(progs []uint32) ([]rpc.Mapping, error) {
	var out []rpc.Mapping
	err := portmapCall(pmapDump, noArgs{}, func(r io.Reader) error {
		for {
			var more bool
			if err := xdr.Read(r, &more); err != nil {
				return err
			}
			if !more {
				return nil
			}
			var m rpc.Mapping
			if err := xdr.Read(r, &m); err != nil {
				return err
			}
			if slices.Contains(progs, m.Prog) {
				out = append(out, m)
			}
		}
	})
	return out, err
}

// portmapChange sets or unsets a registration.
func portmapChange(proc uint32, m rpc.Mapping) error {
	return portmapCall(proc, m, func(r io.Reader) error {
		var ok bool
		if err := xdr.Read(r, &ok); err != nil {
			return err
		}
		if !ok && proc == pmapSet {
			return fmt.Errorf("portmapper refused to register %+v", m)
		}
		return nil
	})
}

// restorePortmap makes the registrations of every program and version in
// saved what they were.
func restorePortmap(saved []rpc.Mapping) error {
	var errs []error
	done := map[[2]uint32]bool{}
	for _, m := range saved {
		key := [2]uint32{m.Prog, m.Vers}
		if !done[key] {
			done[key] = true
			errs = append(errs, portmapChange(pmapUnset, rpc.Mapping{Prog: m.Prog, Vers: m.Vers}))
		}
	}
	for _, m := range saved {
		errs = append(errs, portmapChange(pmapSet, m))
	}
	return errors.Join(errs...)
}
