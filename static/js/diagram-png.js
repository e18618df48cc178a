// Download the sequence diagram as PNG, for slides: the same SVG, drawn on a canvas.

function download(blob) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = "idempotency-sequence.png";
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
}

export function start() {
  document.body.addEventListener("click", function (evt) {
    const button = evt.target.closest && evt.target.closest("[data-png-from]");
    if (!button) return;
    const image = new Image();
    image.onload = function () {
      const canvas = document.createElement("canvas");
      canvas.width = image.naturalWidth * 2; // twice the pixels: sharp on a projector
      canvas.height = image.naturalHeight * 2;
      const context = canvas.getContext("2d");
      context.scale(2, 2);
      context.drawImage(image, 0, 0);
      canvas.toBlob(download, "image/png");
    };
    image.src = button.dataset.pngFrom + "?v=" + Date.now();
  });
}
