package codes_test

import (
	"fmt"
	"time"

	"github.com/sossego/sossego/codes"
)

func ExampleCode_ActiveLimit() {
	set, err := codes.Builtin()
	if err != nil {
		panic(err)
	}
	lapa, _ := set.Code("lapa")
	sp, _ := time.LoadLocation("America/Sao_Paulo")
	l, ok := lapa.ActiveLimit("other", "bar", time.Date(2026, 3, 10, 23, 15, 0, 0, sp))
	fmt.Println(ok, l.DBA, l.Period, l.Article, l.End.Format("02/01 15:04"))
	// Output: true 60 noturno Art. 96 11/03 07:00
}

func ExampleEvaluate() {
	set, _ := codes.Builtin()
	cm, _ := set.Code("conceicao-de-macabu")
	lvl := 52.0
	v := codes.Evaluate(cm, codes.Observation{
		At: time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC), Zone: "residential", Source: "amplified_music", LAeq: &lvl,
	})
	fmt.Println(v.Violation, v.Article, *v.LimitDBA)
	fmt.Println(v.PenaltyStep)
	// Output:
	// true Art. 55 45
	// multa (Arts. 59 e 152: intimação preliminar (Art. 152, I; Art. 171) ou multa de R$ 84,75 / R$ 169,50 / R$ 508,50 (valores de 2006, corrigidos pelo IPCA; faixa definida por decreto do Executivo, Art. 184); a faixa aplicável não está mapeada no código)
}
