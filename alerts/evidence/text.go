package evidence

import (
	"crypto/ed25519"
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/codes"
)

// batchScript re-checks every gateway signature of data/batches.txt with
// openssl alone. It is shipped in the bag (data/verificar-lotes.sh).
const batchScript = `#!/bin/sh
# Confere a assinatura ed25519 de cada lote dos gateways (data/batches.txt) e de cada
# verificação de campo com calibrador (data/checks.txt) com a chave do gateway em vigor
# quando foi recebido (data/keys/). Uso, na pasta do pacote: sh data/verificar-lotes.sh (OpenSSL 3)
# Linha: gateway número recebido chave assinatura(base64) corpo (como enviado, ou "base64:"...)
t=$(mktemp -d) || exit 2
ok=0; falhas=0; sem=0
for arq in batches checks; do
  [ -f "data/$arq.txt" ] || continue; nome=lote; [ "$arq" = checks ] && nome="verificação de campo"
  while read -r gw seq rec chave assin corpo; do
    if [ "$assin" = "-" ] || [ "$chave" = "-" ]; then sem=$((sem+1)); echo "SEM ASSINATURA OU CHAVE: $nome $seq do gateway $gw"; continue; fi
    case "$corpo" in base64:*) printf '%s' "${corpo#base64:}" | base64 -d ;; *) printf '%s' "$corpo" ;; esac > "$t/corpo"
    printf '%s' "$assin" | base64 -d > "$t/assin"
    if openssl pkeyutl -verify -pubin -inkey "data/keys/$chave" -rawin -in "$t/corpo" -sigfile "$t/assin" >/dev/null 2>&1
    then ok=$((ok+1)); else falhas=$((falhas+1)); echo "FALHOU: $nome $seq do gateway $gw (recebido em $rec)"; fi
  done < "data/$arq.txt"
done
rm -rf "$t"
echo "$ok lotes e verificações conferem; $falhas falharam; $sem sem assinatura ou sem chave"
[ "$falhas" -eq 0 ]
`

// verifyText is VERIFICAR.txt: how a perito checks the bag alone.
func verifyText(p *Package, pub ed25519.PublicKey) string {
	fp := Fingerprint(pub)
	return fmt.Sprintf(`COMO CONFERIR ESTE PACOTE DE EVIDÊNCIAS — alerta %s

Este pacote segue a norma BagIt (RFC 8493). Ele foi assinado pelo serviço Sossego
com a chave ed25519 de impressão digital

  %s

Compare essa impressão digital com a impressa na notificação ou no auto, com a
publicada pela Prefeitura (GET /api/v1/evidence/key) ou com a informada pelo órgão.
Só a comparação com uma fonte fora do pacote prova QUEM assinou; a chave que vem
dentro do pacote prova apenas que nada mudou depois da assinatura.

1. Com o programa sossego (arquivo zip ou pasta descompactada):

  sossego evidence verify %s.zip --impressao %s

   Sem --impressao (ou --chave-publica ARQUIVO), o resultado nunca é "íntegro".
   O programa confere cada SHA-256, o Payload-Oxum, a assinatura do serviço, a
   assinatura de cada lote dos gateways com a chave em vigor quando o lote foi
   recebido, e se cada linha de data/readings.csv é igual ao lote assinado; e a
   assinatura de cada verificação de campo com calibrador (data/checks.txt), que o
   gateway assina como assina os lotes.

2. Só com ferramentas padrão (sha256sum, base64, openssl 3), na pasta do pacote:

  a) arquivos de dados e de controle:
       sha256sum -c manifest-sha256.txt
       sha256sum -c tagmanifest-sha256.txt
  b) impressão digital da chave do serviço (deve dar os 64 dígitos acima):
       openssl pkey -pubin -in data/keys/service.pem -outform DER | tail -c 32 | sha256sum
  c) assinatura do serviço sobre tagmanifest-sha256.txt:
       base64 -d tagmanifest-sha256.txt.sig > /tmp/assinatura.bin
       openssl pkeyutl -verify -pubin -inkey data/keys/service.pem -rawin \
         -in tagmanifest-sha256.txt -sigfile /tmp/assinatura.bin
     (deve responder "Signature Verified Successfully")
  d) assinatura de cada lote dos gateways e de cada verificação de campo (as chaves
     estão em data/keys/gateways.json, com o período em que cada uma valeu):
       sh data/verificar-lotes.sh
  e) Payload-Oxum de bag-info.txt: soma dos bytes e número de arquivos de data/:
       find data -type f | wc -l;  find data -type f -exec cat {} + | wc -c

Qualquer byte alterado, acrescentado ou removido faz uma dessas conferências falhar.
`, p.AlertID, GroupedFingerprint(fp), BagName(p.AlertID), fp)
}

func readme(p *Package, acts []actDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, `Pacote de evidências — alerta %s
%s

Como conferir: veja VERIFICAR.txt, na pasta de cima.

readings.csv          todos os registros de 1 s do período exportado (UTC e horário de Brasília)
env.csv               temperatura, umidade e pressão medidas no mesmo período
summary.json          resumo energético da janela do evento (LAeq, LAFmax, L10, L90, limite, margem)
rule.json             a regra aplicada, com versão do código, artigo e texto citado
device.json           ponto de medição; medidor (modelo, série, classe, calibração, verificação de campo)
                      como cadastrado e como os lotes assinados o informam; sincronização do relógio
METODO.txt            como a medição foi feita e o que ela estabelece e não estabelece
batches.txt           os lotes assinados pelos gateways, byte a byte, com a assinatura
batches.ndjson        para cada lote: quando foi recebido, com que chave, se a assinatura confere
checks.txt            as verificações de campo com calibrador acústico assinadas pelo gateway
                      (a última antes da janela e a primeira depois), byte a byte, com a assinatura
checks.ndjson         para cada verificação: quando, com que chave, se a assinatura confere, e o que
                      o calibrador emitiu e o medidor leu
keys/                 chave pública do serviço (service.pem, service.json com o histórico) e as
                      chaves dos gateways em vigor quando os lotes foram recebidos (gateways.json)
verificar-lotes.sh    confere as assinaturas dos lotes e das verificações só com openssl
custody.json          a trilha de auditoria do caso (quem, quando, o quê)
chart.png             gráfico das leituras com a linha do limite
`, p.AlertID, p.CodeTitle)
	if len(acts) > 0 {
		b.WriteString("acts/                 os atos do caso como emitidos (PDF guardado na emissão, byte a byte)\n")
		for _, a := range acts {
			fmt.Fprintf(&b, "  %-30s %s, emitido em %s, SHA-256 %s\n", strings.TrimPrefix(a.File, "data/acts/"), a.ID,
				a.IssuedAt.In(saoPaulo).Format("02/01/2006 15:04"), a.SHA256)
		}
	} else if len(p.NoticePDF) > 0 {
		b.WriteString("notice.pdf            o documento do caso GERADO NA EXPORTAÇÃO a partir do seu registro (não é o PDF guardado na emissão)\n")
	}
	if len(p.Constatacoes) > 0 {
		b.WriteString("constatacoes/         os registros de constatação do caso\n")
	}
	if len(p.Meter.Calibration.file()) > 0 {
		b.WriteString("calibration/          o certificado de calibração do medidor\n")
	}
	return b.String()
}

func gradeText(g string) string {
	switch g {
	case "class1":
		return "classe 1 (IEC 61672-1)"
	case "class2":
		return "classe 2 (IEC 61672-1)"
	case "screening":
		return "triagem (sensor de monitoramento, não é medidor classe 1 ou 2)"
	}
	return g
}

// method is METODO.txt: how the readings were made, and what they do and do
// not establish.
func method(p *Package) string {
	f := p.Finding
	loc := saoPaulo
	lim := "sem limite numérico"
	if f.LimitDB != nil {
		lim = strings.Replace(fmt.Sprintf("%.1f dB(A)", *f.LimitDB), ".", ",", 1)
	}
	cal := "sem certificado de calibração no cadastro"
	if c := p.Meter.Calibration; c != nil {
		cal = fmt.Sprintf("certificado %s, laboratório %s, calibrado em %s, válido até %s", dash(c.Certificate), dash(c.Laboratory), dash(c.Date), dash(c.Expiry))
		if c.UncertaintyDB != nil {
			cal += strings.Replace(fmt.Sprintf(", incerteza expandida %.1f dB", *c.UncertaintyDB), ".", ",", 1)
		}
	}
	check := "nenhuma verificação com calibrador acústico registrada"
	if fc := p.Meter.FieldCheck; fc != nil {
		check = strings.NewReplacer(".", ",").Replace(fmt.Sprintf("verificação com calibrador em %s: referência %.1f dB, lido %.1f dB (desvio %.1f dB)",
			fc.At.In(loc).Format("02/01/2006 15:04"), fc.ReferenceDB, fc.MeasuredDB, fc.MeasuredDB-fc.ReferenceDB))
	}
	if n := len(p.Meter.Checks); n > 0 {
		check += fmt.Sprintf("; %d verificação(ões) de campo assinada(s) pelo gateway em data/checks.txt (a última antes da janela e a primeira depois, quando houver)", n)
	}
	ind := ""
	if p.Meter.Indicative {
		ind = "\nATENÇÃO: as leituras deste medidor são INDICATIVAS: " + p.Meter.IndicativeWhy + "\n"
	}
	zone := p.Site.Zone
	if l := codes.Label("zone", zone); l != "" {
		zone = l
	}
	return fmt.Sprintf(`MÉTODO DA MEDIÇÃO — alerta %s

Descritor     LAeq (nível de pressão sonora contínuo equivalente, ponderação A), em registros
              de 1 s; a janela é avaliada pela média energética dos registros:
              LAeq,T = 10·log10( Σ dur·10^(L/10) / Σ dur ). Nunca se faz média de decibéis.
              Também: LAFmax e LAFmin de cada segundo; L10 e L90 da janela (summary.json).
Ponderação    em frequência: A. Temporal: LAeq é integrado (sem constante de tempo); LAFmax e
              LAFmin usam a ponderação temporal F (rápida, 125 ms).
Janela        %s a %s (horário de Brasília), o período em que o alerta se baseia; o pacote
              traz também %s antes e depois (margem), marcados in_window=false em readings.csv.
Regra         %s, %s: limite %s (%s). Violação somente acima do limite.
Ponto         sensor %s, %s (lat %.6f, lon %.6f), zona %s. Altura do microfone e distância de
              fachadas não são registradas pelo sistema.
Medidor       %s %s, %s; %s; %s.%s
Relógio       cada lote informa se o relógio do gateway estava sincronizado (NTP/GPS) e o erro
              estimado; registros com relógio não sincronizado estão marcados (clock_synced).

O QUE O SISTEMA ESTABELECE
- Que o medidor no ponto acima registrou estes níveis, segundo a segundo, e que os lotes
  com esses registros foram assinados pelo gateway (chave em data/keys/) e não mudaram
  desde então; que o pacote não mudou desde que o serviço o assinou.
- Que o LAeq da janela, calculado dos registros, ficou acima do limite da regra citada
  pelo valor em summary.json (margem), e por quanto tempo.

O QUE O SISTEMA NÃO ESTABELECE
- Com medidor de triagem, as leituras são indicativas: servem para decidir uma vistoria,
  não substituem medição com medidor classe 1 ou 2 calibrado. Com classe 1 ou 2, valem
  dentro da incerteza do medidor (meter_uncertainty_db em summary.json).
- Ruído residual: o sistema não mede o ambiente com a fonte desligada; o L90 da janela é
  só um indício do fundo. Não se separa a contribuição da fonte de outras (trânsito,
  vizinhos), nem se corrige caráter tonal ou impulsivo.
- Quem produziu o som: o sistema mede o nível no ponto; a atribuição à fonte é do fiscal
  (constatação no local, ato em data/acts/).

O QUE A ABNT NBR 10151 PEDIRIA ALÉM DISTO
- Medidor integrador classe 1 ou 2 com calibração rastreável vigente e verificação com
  calibrador acústico antes e depois de cada medição.
- Pontos de medição escolhidos conforme a situação (área externa, junto à fachada ou
  interior do imóvel do reclamante), com posição e altura registradas.
- Medição do som residual, correções para som tonal ou impulsivo, condições meteorológicas
  e tempo de medição adequados, e relatório por técnico responsável.
`, p.AlertID,
		f.WindowStart.In(loc).Format("02/01/2006 15:04:05"), f.WindowEnd.In(loc).Format("02/01/2006 15:04:05"), p.Margin.Round(time.Second),
		f.Article, p.CodeTitle, lim, dash(f.PeriodLabel),
		p.Site.Sensor, p.Site.Address, p.Site.Lat, p.Site.Lon, dash(zone),
		dash(p.Meter.Model), dash(p.Meter.Serial), gradeText(p.Meter.Grade), cal, check, ind)
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return s
}
