// Package archtest checks the import rules docs/ARCHITECTURE.md states: which packages
// may reach which. It has tests only.
package archtest
