package cuckoo

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestLicense checks that the module carries its BSD 3-Clause license.
func TestLicense(t *testing.T) {
	data, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"The cuckoo Authors",
		"Redistributions of source code must retain",
		"Redistributions in binary form must reproduce",
		"Neither the name of the copyright holder",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("LICENSE lacks %q", want)
		}
	}
}

// TestReadmeInstallAndGoVersions checks that the README tells how to install
// the command and states the Go version each module's go.mod requires.
func TestReadmeInstallAndGoVersions(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "go install github.com/seed25b00da8/cuckoo/cmd/cuckoo@latest") {
		t.Error("README lacks the go install line for the cuckoo command")
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`)
	for _, tc := range []struct{ mod, want string }{
		{"go.mod", "library: Go %s or newer"},
		{"bench/go.mod", "needs Go %s"},
	} {
		data, err := os.ReadFile(tc.mod)
		if err != nil {
			t.Fatal(err)
		}
		m := goLine.FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s has no go line", tc.mod)
		}
		want := strings.Replace(tc.want, "%s", string(m[1]), 1)
		if !strings.Contains(string(readme), want) {
			t.Errorf("README does not say %q (from %s)", want, tc.mod)
		}
	}
}
