package main

import (
	"fmt"
	"os"
)

// dataFolder readies the central service's data folder for the command
// named cmd (as printed: "sossego users list"). A command that adds to a
// register may make the folder (the first admin, the first unit value);
// one that reads or changes what is there needs it to exist, so a
// mistyped --data-dir is an error instead of an empty register made there.
func dataFolder(cmd, dir string, create bool, io stdio) (int, bool) {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			fmt.Fprintf(io.err, "%s: %s\n", cmd, describe(err))
			return 1, false
		}
		return 0, true
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fmt.Fprintf(io.err, "%s: a pasta de dados %s não existe ou não é uma pasta (informe em --data-dir a pasta de dados do serviço central)\n", cmd, dir)
		return 1, false
	}
	return 0, true
}
