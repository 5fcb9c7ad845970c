package train

import "testing"

// FuzzParse: no job file makes Parse, or checking the options it gives,
// panic; a file that parses and checks has a dataset the options bound.
func FuzzParse(f *testing.F) {
	for _, name := range Presets() {
		data, _ := presets.ReadFile("presets/" + name + ".yaml")
		f.Add(data)
	}
	f.Add([]byte("dataset: {files: 1, samples_per_file: 1, sample_size: 1}\nreader: {batch_size: 1, read_threads: 1}\ntrain: {epochs: 1}\n"))
	f.Add([]byte("dataset: {sample_size: 9E}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		o := Options{Path: "/x", Accelerators: 1, GenThreads: 1}
		m.Apply(&o)
		if o.Check(1) != nil {
			return
		}
		if n := int64(o.Files) * int64(o.SamplesPerFile); n > maxSamples || o.SampleSize > maxSample {
			t.Fatalf("checked options with %d samples of %d bytes", n, o.SampleSize)
		}
	})
}
