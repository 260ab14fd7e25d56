package slm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Header is what ReadWAVHeader learns from a WAV file before its samples.
type Header struct {
	Format     Format
	Channels   int
	SampleRate int
	// DataSize is the size of the data chunk as declared, in bytes.
	// 0xFFFFFFFF (written by streaming tools that cannot seek back) means
	// "until the end of the input".
	DataSize int64
}

// unknownSize is the data size streaming writers put in the header.
const unknownSize = 0xFFFFFFFF

// maxFmtSize bounds the fmt chunk we read into memory (the largest
// standard one, WAVE_FORMAT_EXTENSIBLE, is 40 bytes).
const maxFmtSize = 1024

// ksDataFormatSuffix is the tail shared by the KSDATAFORMAT_SUBTYPE GUIDs
// whose first two bytes are a plain format tag (PCM, IEEE float).
var ksDataFormatSuffix = []byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}

// ReadWAVHeader reads a RIFF/WAVE header from r up to the first byte of the
// data chunk, skipping chunks it does not need (LIST, fact, …). It accepts
// PCM (8, 16, 24, 32 bits), IEEE float (32, 64 bits) and their
// WAVE_FORMAT_EXTENSIBLE forms; anything else is an *InputError in
// Portuguese saying what to do.
func ReadWAVHeader(r io.Reader) (Header, error) {
	var riff [12]byte
	if _, err := io.ReadFull(r, riff[:]); err != nil {
		return Header{}, headerErr(err, "cabeçalho RIFF")
	}
	switch {
	case string(riff[0:4]) == "RF64" || string(riff[0:4]) == "BW64":
		return Header{}, inputErr(ReasonNotWAV, "arquivo RF64/BW64 (WAV acima de 4 GiB) não suportado: divida a gravação em arquivos WAV menores")
	case string(riff[0:4]) != "RIFF" || string(riff[8:12]) != "WAVE":
		return Header{}, inputErr(ReasonNotWAV, "a entrada não é um arquivo WAV (faltam as marcas RIFF/WAVE): converta para WAV PCM ou use --raw com o formato das amostras")
	}
	var h Header
	haveFmt := false
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			if !haveFmt {
				return Header{}, headerErr(err, "bloco fmt")
			}
			return Header{}, headerErr(err, "bloco data")
		}
		id, size := string(ch[0:4]), int64(binary.LittleEndian.Uint32(ch[4:8]))
		switch id {
		case "fmt ":
			if haveFmt {
				return Header{}, inputErr(ReasonHeader, "o arquivo tem dois blocos fmt: regrave o WAV")
			}
			if size < 16 || size > maxFmtSize {
				return Header{}, inputErr(ReasonHeader, "bloco fmt com %d bytes (esperado de 16 a %d): cabeçalho WAV corrompido", size, maxFmtSize)
			}
			body := make([]byte, size+size%2)
			if _, err := io.ReadFull(r, body); err != nil {
				return Header{}, headerErr(err, "bloco fmt")
			}
			var err error
			if h, err = parseFmt(body[:size]); err != nil {
				return Header{}, err
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return Header{}, inputErr(ReasonHeader, "bloco data antes do bloco fmt: cabeçalho WAV inválido, regrave o arquivo")
			}
			h.DataSize = size
			return h, nil
		default:
			if _, err := io.CopyN(io.Discard, r, size+size%2); err != nil {
				return Header{}, headerErr(err, fmt.Sprintf("bloco %q", sanitizeID(ch[0:4])))
			}
		}
	}
}

func headerErr(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return inputErr(ReasonHeader, "o arquivo termina antes do fim do cabeçalho WAV (%s): arquivo truncado ou vazio", what)
	}
	return fmt.Errorf("slm: read wav header: %w", err)
}

// sanitizeID makes a chunk id printable for messages.
func sanitizeID(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}

// parseFmt decodes and checks a fmt chunk body.
func parseFmt(b []byte) (Header, error) {
	le := binary.LittleEndian
	tag := le.Uint16(b[0:])
	channels := int(le.Uint16(b[2:]))
	rate := le.Uint32(b[4:])
	blockAlign := int(le.Uint16(b[12:]))
	bits := int(le.Uint16(b[14:]))
	if tag == wavFormatExtensi {
		if len(b) < 40 || le.Uint16(b[16:]) < 22 {
			return Header{}, inputErr(ReasonHeader, "bloco fmt WAVE_FORMAT_EXTENSIBLE curto demais (%d bytes): cabeçalho corrompido", len(b))
		}
		if !bytes.Equal(b[26:40], ksDataFormatSuffix) {
			return Header{}, inputErr(ReasonEncoding, "subformato WAVE_FORMAT_EXTENSIBLE desconhecido: converta para WAV PCM 16/24/32 bits ou float 32 bits")
		}
		tag = le.Uint16(b[24:])
	}
	if channels < 1 || channels > maxChannels {
		return Header{}, inputErr(ReasonChannels, "WAV com %d canais: são aceitos de 1 a %d", channels, maxChannels)
	}
	if rate == 0 || rate > 1<<20 {
		return Header{}, inputErr(ReasonHeader, "taxa de amostragem %d Hz inválida no cabeçalho WAV", rate)
	}
	var f Format
	switch {
	case tag == wavFormatPCM && bits == 8:
		f = U8
	case tag == wavFormatPCM && bits == 16:
		f = S16LE
	case tag == wavFormatPCM && bits == 24:
		f = S24LE
	case tag == wavFormatPCM && bits == 32:
		f = S32LE
	case tag == wavFormatFloat && bits == 32:
		f = F32LE
	case tag == wavFormatFloat && bits == 64:
		f = F64LE
	case tag == wavFormatPCM || tag == wavFormatFloat:
		return Header{}, inputErr(ReasonEncoding, "amostras de %d bits não suportadas: converta para PCM 16/24/32 bits ou float 32 bits", bits)
	default:
		return Header{}, inputErr(ReasonEncoding, "codificação WAV 0x%04x não suportada (áudio comprimido?): converta para WAV PCM 16/24/32 bits ou float 32 bits", tag)
	}
	if blockAlign != channels*f.Size() {
		return Header{}, inputErr(ReasonHeader, "alinhamento de quadro %d bytes incoerente com %d canal(is) de %d bits: cabeçalho WAV corrompido", blockAlign, channels, bits)
	}
	return Header{Format: f, Channels: channels, SampleRate: int(rate)}, nil
}

// OpenWAV reads the header of a WAV file and returns a Stream over channel
// of its data chunk. A data chunk shorter than declared (a recording that
// was cut off) is read to its last whole frame.
func OpenWAV(r io.Reader, channel int) (*Stream, Header, error) {
	h, err := ReadWAVHeader(r)
	if err != nil {
		return nil, Header{}, err
	}
	data := r
	if h.DataSize != unknownSize {
		data = io.LimitReader(r, h.DataSize)
	}
	s, err := NewStream(data, h.Format, h.Channels, channel)
	if err != nil {
		return nil, Header{}, err
	}
	s.closer, _ = r.(io.Closer)
	return s, h, nil
}
