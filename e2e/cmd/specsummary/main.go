// Command specsummary prints one line counting the specs of a ginkgo JSON report
// (`ginkgo --json-report`), "specs: N passed, N failed, N skipped", so that a CI log ends with
// a count whatever the suites printed. A suite that failed outside its specs (a build error, a
// failing BeforeSuite) counts as one failure, so a broken suite never reads as "0 failed".
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/onsi/ginkgo/v2/types"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: specsummary <ginkgo-report.json>")
		os.Exit(2)
	}
	line, err := summarize(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "specsummary:", err)
		os.Exit(1)
	}
	fmt.Println(line)
}

func summarize(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read report: %w", err)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return "", fmt.Errorf("decode report %s: %w", path, err)
	}
	var passed, failed, skipped int
	for _, r := range reports {
		suiteFailed := 0
		for _, s := range r.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt {
				continue
			}
			switch {
			case s.State == types.SpecStatePassed:
				passed++
			case s.State.Is(types.SpecStateFailureStates):
				suiteFailed++
			default:
				skipped++
			}
		}
		if !r.SuiteSucceeded && suiteFailed == 0 {
			suiteFailed = 1
		}
		failed += suiteFailed
	}
	return fmt.Sprintf("specs: %d passed, %d failed, %d skipped", passed, failed, skipped), nil
}
