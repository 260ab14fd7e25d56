package evidence

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	kflate "github.com/klauspost/compress/flate"
)

// strictZip refuses anything but a plain zip: the first local header at
// offset 0, members back to back, the central directory right after them
// and the end record last, without a comment. archive/zip alone accepts
// bytes prepended or hidden between members.
func strictZip(r io.ReaderAt, size int64) (int64, error) {
	if size < 22 {
		return 0, errors.New("arquivo curto demais (incompleto)")
	}
	var sig [4]byte
	if _, err := r.ReadAt(sig[:], 0); err != nil || string(sig[:]) != "PK\x03\x04" {
		return 0, errors.New("o arquivo não começa com um membro zip (bytes acrescentados no início?)")
	}
	var end [22]byte
	if _, err := r.ReadAt(end[:], size-22); err != nil {
		return 0, fmt.Errorf("fim do zip ilegível: %v", err)
	}
	if string(end[:4]) != "PK\x05\x06" {
		return 0, errors.New("o arquivo não termina no registro final do zip (truncado, ou bytes acrescentados no fim?)")
	}
	if binary.LittleEndian.Uint16(end[20:]) != 0 {
		return 0, errors.New("o zip tem um comentário; o pacote não tem")
	}
	cdSize, cdOff, endOff := int64(binary.LittleEndian.Uint32(end[12:])), int64(binary.LittleEndian.Uint32(end[16:])), size-22
	if cdOff == 0xFFFFFFFF || cdSize == 0xFFFFFFFF { // zip64
		var loc [20]byte
		if size < 42 {
			return 0, errors.New("zip64 incompleto")
		}
		if _, err := r.ReadAt(loc[:], size-42); err != nil || string(loc[:4]) != "PK\x06\x07" {
			return 0, errors.New("zip64 sem localizador do registro final")
		}
		endOff = int64(binary.LittleEndian.Uint64(loc[8:]))
		var e64 [56]byte
		if endOff < 0 || endOff > size-42-56 {
			return 0, errors.New("zip64 com registro final fora do arquivo")
		}
		if _, err := r.ReadAt(e64[:], endOff); err != nil || string(e64[:4]) != "PK\x06\x06" {
			return 0, errors.New("zip64 com registro final ilegível")
		}
		cdSize, cdOff = int64(binary.LittleEndian.Uint64(e64[40:])), int64(binary.LittleEndian.Uint64(e64[48:]))
		if endOff+56 != size-42 {
			return 0, errors.New("bytes estranhos entre os registros finais do zip64")
		}
	}
	if cdOff < 0 || cdSize < 0 || cdOff+cdSize != endOff {
		return 0, errors.New("o diretório central do zip não está onde o registro final diz (bytes acrescentados no início ou no meio?)")
	}
	return cdOff, nil
}

// contiguous checks the members lie back to back from offset 0 up to the
// central directory, each local header (and data descriptor) saying what
// the central directory says of its member.
func contiguous(r io.ReaderAt, files []*zip.File, cdOff int64) error {
	type m struct {
		f   *zip.File
		off int64
	}
	ms := make([]m, 0, len(files))
	for _, f := range files {
		off, err := f.DataOffset()
		if err != nil {
			return fmt.Errorf("o cabeçalho local de %s está ilegível", f.Name)
		}
		ms = append(ms, m{f, off})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].off < ms[j].off })
	pos := int64(0)
	for _, x := range ms {
		var h [30]byte
		if _, err := r.ReadAt(h[:], pos); err != nil || string(h[:4]) != "PK\x03\x04" {
			return fmt.Errorf("o zip não é contíguo: bytes estranhos antes de %s", x.f.Name)
		}
		data := pos + 30 + int64(binary.LittleEndian.Uint16(h[26:])) + int64(binary.LittleEndian.Uint16(h[28:]))
		if data != x.off {
			return fmt.Errorf("o zip não é contíguo: bytes estranhos antes de %s", x.f.Name)
		}
		if err := localAgrees(r, pos, &h, x.f); err != nil {
			return err
		}
		pos = data + int64(x.f.CompressedSize64)
		if binary.LittleEndian.Uint16(h[6:])&0x8 != 0 { // data descriptor
			n, err := descriptorAgrees(r, pos, x.f)
			if err != nil {
				return err
			}
			pos += n
		}
	}
	if pos != cdOff {
		return errors.New("o zip não é contíguo: bytes estranhos entre o último membro e o diretório central")
	}
	return nil
}

// localAgrees checks that the local header h (at pos) names f as the
// central directory does, with the same flags and method, and, without a
// data descriptor, the same CRC-32 and sizes (with one, they are zero or
// the same). A tool that reads the local headers (a streaming unzip) must
// see the member the verifier checked.
func localAgrees(r io.ReaderAt, pos int64, h *[30]byte, f *zip.File) error {
	le := binary.LittleEndian
	name := make([]byte, le.Uint16(h[26:]))
	if _, err := r.ReadAt(name, pos+30); err != nil || string(name) != f.Name {
		return fmt.Errorf("o cabeçalho local do membro %q o chama de %q", f.Name, name)
	}
	if le.Uint16(h[6:]) != f.Flags || le.Uint16(h[8:]) != f.Method {
		return fmt.Errorf("o cabeçalho local de %s difere do diretório central (opções ou método de compressão)", f.Name)
	}
	crc, csize, usize := le.Uint32(h[14:]), uint64(le.Uint32(h[18:])), uint64(le.Uint32(h[22:]))
	if csize == 0xFFFFFFFF || usize == 0xFFFFFFFF {
		extra := make([]byte, le.Uint16(h[28:]))
		if _, err := r.ReadAt(extra, pos+30+int64(len(name))); err != nil {
			return fmt.Errorf("o cabeçalho local de %s está ilegível", f.Name)
		}
		usize, csize = zip64Sizes(extra, usize, csize)
	}
	if f.Flags&0x8 != 0 && crc == 0 && csize == 0 && usize == 0 {
		return nil
	}
	if crc != f.CRC32 || csize != f.CompressedSize64 || usize != f.UncompressedSize64 {
		return fmt.Errorf("o cabeçalho local de %s difere do diretório central (CRC-32 ou tamanhos)", f.Name)
	}
	return nil
}

// zip64Sizes reads the sizes a zip64 extra field gives for the ones a
// local header leaves at 0xFFFFFFFF (uncompressed first, then compressed).
func zip64Sizes(extra []byte, usize, csize uint64) (uint64, uint64) {
	le := binary.LittleEndian
	for len(extra) >= 4 {
		id, n := le.Uint16(extra), int(le.Uint16(extra[2:]))
		if n > len(extra)-4 {
			break
		}
		body := extra[4 : 4+n]
		if id == 0x0001 {
			for _, v := range []*uint64{&usize, &csize} {
				if *v == 0xFFFFFFFF && len(body) >= 8 {
					*v, body = le.Uint64(body), body[8:]
				}
			}
			break
		}
		extra = extra[4+n:]
	}
	return usize, csize
}

// descriptorAgrees checks the data descriptor at pos (after f's data) has
// the central directory's CRC-32 and sizes, and returns its length.
func descriptorAgrees(r io.ReaderAt, pos int64, f *zip.File) (int64, error) {
	le := binary.LittleEndian
	var d [24]byte
	n, _ := r.ReadAt(d[:], pos)
	b, start := d[:n], int64(0)
	if len(b) >= 4 && string(b[:4]) == "PK\x07\x08" {
		b, start = b[4:], 4
	}
	wide := f.CompressedSize64 >= 0xFFFFFFFF || f.UncompressedSize64 >= 0xFFFFFFFF
	var crc uint32
	var csize, usize uint64
	switch {
	case wide && len(b) >= 20:
		crc, csize, usize = le.Uint32(b), le.Uint64(b[4:]), le.Uint64(b[12:])
	case !wide && len(b) >= 12:
		crc, csize, usize = le.Uint32(b), uint64(le.Uint32(b[4:])), uint64(le.Uint32(b[8:]))
	default:
		return 0, fmt.Errorf("o descritor de dados de %s está incompleto", f.Name)
	}
	if crc != f.CRC32 || csize != f.CompressedSize64 || usize != f.UncompressedSize64 {
		return 0, fmt.Errorf("o descritor de dados de %s difere do diretório central (CRC-32 ou tamanhos)", f.Name)
	}
	if wide {
		return start + 20, nil
	}
	return start + 12, nil
}

type opener func() (io.ReadCloser, error)

// inflater reads a deflated zip member with klauspost/compress's inflater
// (about twice as fast as compress/flate's, the same format).
func inflater(r io.Reader) io.ReadCloser { return kflate.NewReader(r) }

// indexZip takes the zip's members: one top directory (the bag's name),
// safe relative names, no duplicates, back to back.
func (b *bagFiles) indexZip(r io.ReaderAt, members []*zip.File, cdOff int64) {
	root := ""
	for _, f := range members {
		name := f.Name
		if strings.HasSuffix(name, "/") {
			continue
		}
		if strings.Contains(name, "\\") || strings.HasPrefix(name, "/") || path.Clean(name) != name || strings.Contains(name, "..") {
			b.rep.add("nome de arquivo inseguro no zip: %q", name)
			continue
		}
		top, rest, ok := strings.Cut(name, "/")
		if !ok || rest == "" {
			b.rep.add("arquivo %q fora do diretório do pacote", name)
			continue
		}
		if root == "" {
			root = top
		} else if top != root {
			b.rep.add("arquivo %q fora do diretório do pacote %q", name, root)
			continue
		}
		if _, dup := b.files[rest]; dup {
			b.rep.add("arquivo %q aparece duas vezes no zip", rest)
			continue
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			b.rep.add("%s é um link simbólico no zip: não faz parte de um pacote", rest)
			continue
		}
		b.files[rest] = f.Open
		b.sizes[rest] = int64(min(f.UncompressedSize64, maxKeptFile))
	}
	b.rep.Bag = root
	if err := contiguous(r, members, cdOff); err != nil {
		b.rep.add("%v", err)
	}
}
